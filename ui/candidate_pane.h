#pragma once
// The selected candidate: its source in the CUDA editor (editable; compile errors marked on their
// lines), compile log (a line that names a source line jumps there), PTX and SASS, metrics beside
// a pinned baseline, the idea that produced it, a diff against its parent, Nsight Compute metrics
// when profiled, and the language-model exchanges that produced an idea or a candidate. A round
// or an idea shows its summary instead. Unsaved edits of a candidate are kept while another one
// is shown, and across Save As; the window asks before anything would drop them.
#include "engine_jobs.h"
#include "model/exchange_model.h"
#include "model/session_snapshot.h"

#include <QHash>
#include <QWidget>

#include <memory>

class QElapsedTimer;
class QLabel;
class QStackedWidget;
class QTabWidget;
class QTableView;
class QTextBrowser;
class QToolBar;
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
    // The next snapshot read from `path` is a copy of the current session (Save As): the
    // unsaved edits stay, as its nodes are the same.
    void keepDraftsFor(const std::string &path) { m_keepDraftsFor = path; }
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
    bool edited() const; // the editor differs from the stored source
    // Candidates with unsaved edits (the one shown included), by id, and their edited text.
    QList<qint64> draftNodes() const;
    QString draftText(std::int64_t node) const;
    void dropDraft(std::int64_t node); // its edit was saved elsewhere (re-benchmarked)
    CudaEditor *editor() const { return m_editor; }
    QTabWidget *tabs() const { return m_tabs; }
    MetricsModel *metrics() const { return m_metrics; }
    ExchangeView *exchanges() const { return m_exchanges; }
    QsciScintilla *log() const { return m_log; }
    QString logText() const;
    QString diffText() const;
    QString ideaText() const;
    // The summary shown in place of the tabs for a round or an idea ("" when the tabs show).
    QString summaryText() const;
    bool showsSummary() const;
    QString profileHint() const; // what the empty Profile tab says it needs
    QString headerText() const;

public slots:
    void compileCheck(); // of what the editor holds
    void rebenchmark();  // compile check first; then the engine runs it
    void revert();

signals:
    void compileRequested(const std::string &source, std::int64_t node);
    void rebenchmarkRequested(std::int64_t parent, const std::string &source, const QString &title);
    void pinRequested(std::int64_t node);
    void exportRequested(std::int64_t node);
    void profileRequested(std::int64_t node);
    // The Exchanges tab wants the node's exchanges (read off the GUI thread: showExchanges).
    void exchangesRequested(std::int64_t node);
    // A compile check the user asked for started, and how it ended ("2 errors, 1 warning, 0.99 s").
    void compileStarted(std::int64_t node);
    void compileFinished(std::int64_t node, const QString &summary, bool ok);

private:
    QToolBar *buildButtons(); // in a tool bar, which the caller lays out
    void buildEditors();
    void buildMetricsView();
    void buildProfilePages();
    void buildTabs();
    void connectButtons();
    void connectTabs();
    void showStored();
    void showSummary(const NodeView *);
    void updateProfileHint();
    void showBaselineColumns();
    void markLogLines();
    void jumpToSourceLine(int line);
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
    bool m_checkAsked = false; // the pending compile is a check the user asked for
    std::unique_ptr<QElapsedTimer> m_checkClock;
    QHash<int, int> m_logTargets; // compile-log line -> source line (0-based both)
    std::string m_keepDraftsFor;
    std::int64_t m_ptxFor = -1;      // the node whose PTX is shown or asked for
    std::int64_t m_profiledNode = 0; // the node whose profile is shown or asked for
    std::string m_exchangesKey;      // the node and its update time whose exchanges are shown or asked for
    QString m_gpuReason;
    bool m_gpuBusy = false;

    QLabel *m_header, *m_profileHint;
    QStackedWidget *m_pages, *m_profilePages;
    QTextBrowser *m_summary;
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
