#pragma once
// The selected candidate: its source in the CUDA editor (editable; compile errors marked on their
// lines), compile log, PTX and SASS, metrics beside a pinned baseline, the idea that produced it,
// a diff against its parent, Nsight Compute metrics when profiled, and the language-model
// exchanges that produced an idea or a candidate. Unsaved edits of a candidate are kept while
// another one is shown.
#include "engine_jobs.h"
#include "model/exchange_model.h"
#include "model/session_snapshot.h"

#include <QHash>
#include <QWidget>

class QLabel;
class QTabWidget;
class QTableView;
class QTextBrowser;
class QStandardItemModel;
class QToolButton;
class QsciScintilla;

namespace kf::ui {

class CudaEditor;
class ExchangeView;
class MetricsModel;

class CandidatePane : public QWidget {
    Q_OBJECT
public:
    enum Tab { SourceTab, LogTab, PtxTab, SassTab, MetricsTab, IdeaTab, DiffTab, ProfileTab, ExchangesTab };
    explicit CandidatePane(QWidget *parent = nullptr);

    void setSnapshot(const SnapshotPtr &);
    void setNode(std::int64_t node);
    std::int64_t node() const { return m_node; }
    void setPinned(std::int64_t node);
    std::int64_t pinned() const { return m_pinned; }
    // Why running kernels is unavailable ("" when it is available): Re-benchmark says it.
    void setGpuUnavailable(const QString &reason);
    void setGpuBusy(bool);

    void showCompileReport(const CompileReport &);
    void showProfile(const ProfileReport &);
    void showExchanges(const ExchangesPtr &);

    QString source() const;
    bool edited() const;          // the editor differs from the stored source
    CudaEditor *editor() const { return m_editor; }
    QTabWidget *tabs() const { return m_tabs; }
    MetricsModel *metrics() const { return m_metrics; }
    ExchangeView *exchanges() const { return m_exchanges; }
    QString logText() const;
    QString diffText() const;
    QString ideaText() const;

public slots:
    void compileCheck();          // of what the editor holds
    void rebenchmark();           // compile check first; then the engine runs it
    void revert();

signals:
    void compileRequested(const std::string &source, std::int64_t node);
    void rebenchmarkRequested(std::int64_t parent, const std::string &source, const QString &title);
    void pinRequested(std::int64_t node);
    void exportRequested(std::int64_t node);
    void profileRequested(std::int64_t node);
    // The Exchanges tab wants the node's exchanges (read off the GUI thread: showExchanges).
    void exchangesRequested(std::int64_t node);

private:
    void showStored();
    void updateDiff();
    void updateButtons();
    void requestLazyCompile();
    void requestExchanges();
    QString noExchangesText(const NodeView &) const;
    std::int64_t diffBase() const; // the parent kernel: a candidate above, or the idea's parent kernel

    SnapshotPtr m_snapshot;
    std::int64_t m_node = 0, m_pinned = 0;
    std::int64_t m_shownNode = 0;    // the node the editor was last loaded from
    std::string m_shownUpdated;      // and its update time then
    QHash<qint64, QString> m_drafts; // unsaved edits by node
    bool m_loading = false;
    bool m_rebenchAfterCompile = false;
    std::int64_t m_ptxFor = -1;      // the node whose PTX is shown or asked for
    std::string m_exchangesKey;      // the node and its update time whose exchanges are shown or asked for
    QString m_gpuReason;
    bool m_gpuBusy = false;

    QLabel *m_header;
    QToolButton *m_check, *m_rebench, *m_revert, *m_pin, *m_export, *m_profile;
    QTabWidget *m_tabs;
    CudaEditor *m_editor;
    QsciScintilla *m_log, *m_ptx, *m_sass, *m_diff;
    QTextBrowser *m_idea;
    QTableView *m_metricsView, *m_profileView;
    MetricsModel *m_metrics;
    QStandardItemModel *m_profileModel;
    ExchangeView *m_exchanges;
};

} // namespace kf::ui
