#pragma once
// Code editors: one function builds every editor of the workbench the same way (font, margins,
// lexer), and the CUDA editor marks compile errors and warnings on their lines.
#include "kernel/compile_output.h"

#include <Qsci/qscilexercpp.h>
#include <Qsci/qsciscintilla.h>

#include <vector>

namespace kf::ui {

// C++ highlighting plus CUDA's qualifiers, built-in variables, intrinsics and vector types (the
// word lists are resources/editor/cuda_keywords.txt).
class CudaLexer : public QsciLexerCPP {
    Q_OBJECT
public:
    explicit CudaLexer(QObject *parent = nullptr);
    const char *language() const override { return "CUDA"; }
    const char *keywords(int set) const override;
};

enum class EditorKind { Cuda, Python, Diff, Log, Ptx };

// A read-only editor for everything but Cuda (which is editable).
QsciScintilla *makeEditor(EditorKind, QWidget *parent = nullptr);

class CudaEditor : public QsciScintilla {
    Q_OBJECT
public:
    enum Marker { ErrorMarker = 0, WarningMarker = 1 };
    explicit CudaEditor(QWidget *parent = nullptr);

    // Marks each diagnostic's line (errors red, warnings amber) with its message under the line;
    // diagnostics without a line are left to the log.
    void setDiagnostics(const std::vector<Diagnostic> &);
    void clearDiagnostics();
    int errorCount() const { return m_errors; }
    int warningCount() const { return m_warnings; }
    bool lineHasMarker(int line, Marker) const; // 1-based, for tests

private:
    int m_errors = 0, m_warnings = 0;
};

} // namespace kf::ui
