#include "cuda_editor.h"

#include "model/format.h"

#include <Qsci/qscilexerdiff.h>
#include <Qsci/qscilexerpython.h>

#include <QFile>
#include <QFontDatabase>
#include <QMap>

namespace kf::ui {

namespace {

// The word lists by section, read once from the resource.
const QMap<QString, QByteArray> &cudaWords()
{
    static const QMap<QString, QByteArray> words = [] {
        QMap<QString, QByteArray> out;
        QFile f(QStringLiteral(":/kernelforge/cuda_keywords.txt"));
        if (!f.open(QIODevice::ReadOnly))
            return out;
        QString section;
        for (const QByteArray &raw : f.readAll().split('\n')) {
            const QByteArray line = raw.trimmed();
            if (line.isEmpty() || line.startsWith('#'))
                continue;
            if (line.startsWith('[') && line.endsWith(']')) {
                section = QString::fromLatin1(line.mid(1, line.size() - 2));
                continue;
            }
            out[section] += ' ' + line;
        }
        return out;
    }();
    return words;
}

QFont codeFont()
{
    QFont f = QFontDatabase::systemFont(QFontDatabase::FixedFont);
    f.setPointSize(10);
    return f;
}

void setUp(QsciScintilla *e)
{
    e->setUtf8(true);
    e->setFont(codeFont());
    e->setMarginsFont(codeFont());
    e->setMarginType(0, QsciScintilla::NumberMargin);
    e->setMarginWidth(0, QStringLiteral("00000"));
    e->setMarginLineNumbers(0, true);
    e->setTabWidth(4);
    e->setIndentationsUseTabs(false);
    e->setAutoIndent(true);
    e->setBraceMatching(QsciScintilla::SloppyBraceMatch);
    e->setCaretLineVisible(true);
    e->setCaretLineBackgroundColor(QColor(0xf3, 0xf6, 0xfb));
    e->setWrapMode(QsciScintilla::WrapNone);
}

} // namespace

CudaLexer::CudaLexer(QObject *parent) : QsciLexerCPP(parent)
{
    setDefaultFont(codeFont());
    for (int style = 0; style < 128; ++style)
        setFont(codeFont(), style);
    setColor(QColor(0x00, 0x57, 0xae), Keyword);
    setColor(QColor(0x8e, 0x44, 0xad), KeywordSet2);
    setColor(QColor(0x00, 0x80, 0x80), GlobalClass);
    setColor(QColor(0x6a, 0x73, 0x7d), Comment);
    setColor(QColor(0x6a, 0x73, 0x7d), CommentLine);
    setColor(QColor(0xb3, 0x5c, 0x00), Number);
    setColor(QColor(0x2e, 0x7d, 0x32), DoubleQuotedString);
    setColor(QColor(0x9e, 0x4a, 0x00), PreProcessor);
}

const char *CudaLexer::keywords(int set) const
{
    // QScintilla keeps the pointer: the lists live as long as the program.
    static const QByteArray primary =
        QByteArray(QsciLexerCPP::keywords(1)) + cudaWords().value(QStringLiteral("keywords"));
    static const QByteArray second = cudaWords().value(QStringLiteral("intrinsics")).trimmed();
    static const QByteArray types = cudaWords().value(QStringLiteral("types")).trimmed();
    switch (set) {
    case 1:
        return primary.constData();
    case 2:
        return second.constData();
    case 4:
        return types.constData();
    default:
        return QsciLexerCPP::keywords(set);
    }
}

QsciScintilla *makeEditor(EditorKind kind, QWidget *parent)
{
    QsciScintilla *e = kind == EditorKind::Cuda ? new CudaEditor(parent) : new QsciScintilla(parent);
    setUp(e);
    switch (kind) {
    case EditorKind::Cuda:
        e->setLexer(new CudaLexer(e));
        break;
    case EditorKind::Python: {
        auto *l = new QsciLexerPython(e);
        l->setDefaultFont(codeFont());
        for (int style = 0; style < 128; ++style)
            l->setFont(codeFont(), style);
        e->setLexer(l);
        break;
    }
    case EditorKind::Diff: {
        auto *l = new QsciLexerDiff(e);
        l->setDefaultFont(codeFont());
        for (int style = 0; style < 128; ++style)
            l->setFont(codeFont(), style);
        e->setLexer(l);
        break;
    }
    case EditorKind::Log:
    case EditorKind::Ptx:
        break;
    }
    if (kind != EditorKind::Cuda) {
        e->setReadOnly(true);
        e->setCaretLineVisible(false);
    }
    return e;
}

CudaEditor::CudaEditor(QWidget *parent) : QsciScintilla(parent)
{
    setMarginType(1, QsciScintilla::SymbolMargin);
    setMarginWidth(1, 16);
    setMarginMarkerMask(1, (1 << ErrorMarker) | (1 << WarningMarker));
    markerDefine(QsciScintilla::Circle, ErrorMarker);
    setMarkerBackgroundColor(QColor(0xc6, 0x28, 0x28), ErrorMarker);
    setMarkerForegroundColor(QColor(0x8b, 0x00, 0x00), ErrorMarker);
    markerDefine(QsciScintilla::Circle, WarningMarker);
    setMarkerBackgroundColor(QColor(0xe0, 0xa0, 0x20), WarningMarker);
    setMarkerForegroundColor(QColor(0x90, 0x60, 0x00), WarningMarker);
    setAnnotationDisplay(QsciScintilla::AnnotationBoxed);
}

void CudaEditor::clearDiagnostics()
{
    markerDeleteAll();
    clearAnnotations();
    m_errors = m_warnings = 0;
}

void CudaEditor::setDiagnostics(const std::vector<Diagnostic> &diagnostics)
{
    clearDiagnostics();
    QMap<int, QStringList> notes;
    for (const Diagnostic &d : diagnostics) {
        const bool error = d.severity != "warning";
        (error ? m_errors : m_warnings)++;
        if (d.line <= 0 || d.line > lines())
            continue;
        markerAdd(d.line - 1, error ? ErrorMarker : WarningMarker);
        notes[d.line - 1] << QStringLiteral("%1: %2").arg(qs(d.severity), qs(d.message));
    }
    for (auto it = notes.cbegin(); it != notes.cend(); ++it)
        annotate(it.key(), it.value().join(QLatin1Char('\n')), 0);
}

bool CudaEditor::lineHasMarker(int line, Marker m) const
{
    return line > 0 && (const_cast<CudaEditor *>(this)->markersAtLine(line - 1) & (1 << m));
}

} // namespace kf::ui
