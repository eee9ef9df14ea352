#include "candidate_pane.h"

#include "cuda_editor.h"
#include "exchange_view.h"
#include "model/format.h"
#include "model/line_diff.h"
#include "model/metrics_model.h"
#include "model/node_text.h"
#include "model/status_style.h"
#include "search/records.h"

#include <QElapsedTimer>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QRegularExpression>
#include <QStackedWidget>
#include <QStandardItemModel>
#include <QTabWidget>
#include <QTableView>
#include <QTextBrowser>
#include <QToolBar>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>

namespace kf::ui {

namespace {

QToolButton *button(const QString &text, const QString &tip, QWidget *parent)
{
    auto *b = new QToolButton(parent);
    b->setText(text);
    b->setToolTip(tip);
    b->setToolButtonStyle(Qt::ToolButtonTextOnly);
    return b;
}

QTableView *table(QAbstractItemModel *model, QWidget *parent)
{
    auto *v = new QTableView(parent);
    v->setModel(model);
    v->verticalHeader()->hide();
    v->horizontalHeader()->setStretchLastSection(true);
    v->setAlternatingRowColors(true);
    v->setSelectionBehavior(QAbstractItemView::SelectRows);
    v->setEditTriggers(QAbstractItemView::NoEditTriggers);
    return v;
}

void setText(QsciScintilla *e, const QString &text)
{
    const bool ro = e->isReadOnly();
    e->setReadOnly(false);
    e->setText(text);
    e->setReadOnly(ro);
}

constexpr int kLogLinkIndicator = 8; // the compile log's indicator for lines that name a source line

// The source line a compile-log line names ("candidate.cu(12): error: ...", "candidate.cu:4:
// @launch: ..."), 1-based; 0 when it names none.
int sourceLineOf(const QString &logLine)
{
    static const QRegularExpression re(QStringLiteral("^candidate\\.cu(?:\\((\\d+)\\)|:(\\d+))"));
    const auto m = re.match(logLine);
    if (!m.hasMatch())
        return 0;
    return (m.captured(1).isEmpty() ? m.captured(2) : m.captured(1)).toInt();
}

} // namespace

CandidatePane::CandidatePane(QWidget *parent) : QWidget(parent)
{
    m_header = new QLabel(tr("Select a candidate in the search tree"), this);
    m_header->setTextFormat(Qt::RichText);
    QToolBar *bar = buildButtons();
    buildEditors();
    buildMetricsView();
    buildProfilePages();
    buildTabs();

    auto *l = new QVBoxLayout(this);
    l->setContentsMargins(4, 4, 4, 4);
    l->addWidget(m_header);
    l->addWidget(bar);
    l->addWidget(m_pages, 1);

    connectButtons();
    connectTabs();
    updateButtons();
}

QToolBar *CandidatePane::buildButtons()
{
    m_check = button(tr("Compile check"), tr("Compile the editor's source with NVRTC (no GPU needed) (Ctrl+B)"), this);
    m_rebench = button(tr("Re-benchmark"), {}, this);
    m_revert = button(tr("Revert"), tr("Back to the stored source"), this);
    m_pin = button(tr("Pin as baseline"), tr("Compare other candidates with this one (Ctrl+P)"), this);
    m_export = button(tr("Export .cu…"), tr("A standalone .cu with a host launcher (Ctrl+E)"), this);
    m_profile = button(tr("Profile"), {}, this);
    m_check->setObjectName(QStringLiteral("compileCheck"));
    m_rebench->setObjectName(QStringLiteral("rebenchmark"));
    m_profile->setObjectName(QStringLiteral("profile"));

    // A tool bar, so that a narrow window folds the buttons into its » menu instead of widening.
    auto *bar = new QToolBar(this);
    bar->setObjectName(QStringLiteral("candidateBar"));
    bar->setIconSize(QSize(1, 1));
    for (QToolButton *b : {m_check, m_rebench, m_revert, m_pin, m_export, m_profile})
        bar->addWidget(b);
    return bar;
}

void CandidatePane::buildEditors()
{
    m_editor = static_cast<CudaEditor *>(makeEditor(EditorKind::Cuda, this));
    m_editor->setObjectName(QStringLiteral("cudaEditor"));
    m_log = makeEditor(EditorKind::Log, this);
    m_log->setObjectName(QStringLiteral("compileLog"));
    m_log->indicatorDefine(QsciScintilla::PlainIndicator, kLogLinkIndicator);
    m_log->setIndicatorForegroundColor(QColor(0x1e, 0x40, 0xaf), kLogLinkIndicator);
    m_log->setIndicatorHoverStyle(QsciScintilla::FullBoxIndicator, kLogLinkIndicator);
    m_log->setIndicatorHoverForegroundColor(QColor(0x1e, 0x40, 0xaf), kLogLinkIndicator);
    m_ptx = makeEditor(EditorKind::Ptx, this);
    m_sass = makeEditor(EditorKind::Ptx, this);
    m_diff = makeEditor(EditorKind::Diff, this);
    m_idea = new QTextBrowser(this);
}

void CandidatePane::buildMetricsView()
{
    m_metrics = new MetricsModel(this);
    connect(m_metrics, &QAbstractItemModel::modelReset, this, &CandidatePane::showBaselineColumns);
    m_metricsView = table(m_metrics, this);
    m_metricsView->setObjectName(QStringLiteral("metricsView"));
    m_metricsView->setWordWrap(false);
    // The two candidates share the width; long values (the floors) end in "…" and show whole in
    // their tooltip. The baseline and the difference show once a baseline is pinned.
    m_metricsView->horizontalHeader()->setStretchLastSection(false);
    m_metricsView->horizontalHeader()->setSectionResizeMode(MetricsModel::NameColumn, QHeaderView::ResizeToContents);
    m_metricsView->horizontalHeader()->setSectionResizeMode(MetricsModel::SelectedColumn, QHeaderView::Stretch);
    m_metricsView->horizontalHeader()->setSectionResizeMode(MetricsModel::PinnedColumn, QHeaderView::Stretch);
    m_metricsView->horizontalHeader()->setSectionResizeMode(MetricsModel::DeltaColumn, QHeaderView::ResizeToContents);
    m_metricsView->verticalHeader()->setDefaultSectionSize(22);
}

void CandidatePane::buildProfilePages()
{
    m_profileModel = new QStandardItemModel(0, 2, this);
    m_profileModel->setHorizontalHeaderLabels({tr("Nsight Compute metric"), tr("Value")});
    m_profileView = table(m_profileModel, this);
    m_profileHint = new QLabel(this);
    m_profileHint->setObjectName(QStringLiteral("profileHint"));
    m_profileHint->setWordWrap(true);
    m_profileHint->setAlignment(Qt::AlignTop | Qt::AlignLeft);
    m_profileHint->setMargin(12);
    m_profilePages = new QStackedWidget(this);
    m_profilePages->addWidget(m_profileHint);
    m_profilePages->addWidget(m_profileView);
}

void CandidatePane::buildTabs()
{
    m_exchanges = new ExchangeView(this);
    m_exchanges->setObjectName(QStringLiteral("exchanges"));

    m_tabs = new QTabWidget(this);
    m_tabs->setObjectName(QStringLiteral("candidateTabs"));
    m_tabs->setDocumentMode(true);
    m_tabs->addTab(m_editor, tr("Source"));
    m_tabs->addTab(m_log, tr("Compile log"));
    m_tabs->addTab(m_ptx, tr("PTX"));
    m_tabs->addTab(m_sass, tr("SASS"));
    m_tabs->addTab(m_metricsView, tr("Metrics"));
    m_tabs->addTab(m_idea, tr("Idea"));
    m_tabs->addTab(m_diff, tr("Diff vs parent"));
    m_tabs->addTab(m_profilePages, tr("Profile"));
    m_tabs->addTab(m_exchanges, tr("Exchanges"));
    m_tabs->setTabToolTip(ExchangesTab,
                          tr("The language-model requests and answers that produced this idea or candidate"));

    m_summary = new QTextBrowser(this);
    m_summary->setObjectName(QStringLiteral("nodeSummary"));
    m_pages = new QStackedWidget(this);
    m_pages->addWidget(m_tabs);
    m_pages->addWidget(m_summary);
}

void CandidatePane::connectButtons()
{
    connect(m_check, &QToolButton::clicked, this, &CandidatePane::compileCheck);
    connect(m_rebench, &QToolButton::clicked, this, &CandidatePane::rebenchmark);
    connect(m_revert, &QToolButton::clicked, this, &CandidatePane::revert);
    connect(m_pin, &QToolButton::clicked, this, [this] { emit pinRequested(m_pinned == m_node ? 0 : m_node); });
    connect(m_export, &QToolButton::clicked, this, [this] { emit exportRequested(m_node); });
    connect(m_profile, &QToolButton::clicked, this, [this] {
        m_tabs->setCurrentIndex(ProfileTab);
        m_profilePages->setCurrentWidget(m_profileView);
        m_profiledNode = m_node;
        m_profileModel->removeRows(0, m_profileModel->rowCount());
        m_profileModel->appendRow({new QStandardItem(tr("Profiling under Nsight Compute…")), new QStandardItem});
        emit profileRequested(m_node);
    });
}

void CandidatePane::connectTabs()
{
    connect(m_editor, &QsciScintilla::textChanged, this, [this] {
        if (m_loading)
            return;
        if (edited())
            m_drafts.insert(m_node, m_editor->text());
        else
            m_drafts.remove(m_node);
        updateDiff();
        updateButtons();
    });
    connect(m_log, &QsciScintilla::indicatorClicked, this, [this](int line, int, Qt::KeyboardModifiers) {
        if (m_logTargets.contains(line))
            jumpToSourceLine(m_logTargets.value(line));
    });
    connect(m_tabs, &QTabWidget::currentChanged, this, &CandidatePane::requestLazyCompile);
    connect(m_tabs, &QTabWidget::currentChanged, this, &CandidatePane::requestExchanges);
}

void CandidatePane::setSnapshot(const SnapshotPtr &s)
{
    const bool sameSession = m_snapshot && s && m_snapshot->path == s->path;
    const bool copy = s && !m_keepDraftsFor.empty() && s->path == m_keepDraftsFor;
    if (s)
        m_keepDraftsFor.clear();
    m_snapshot = s;
    if (copy) {
        m_shownNode = 0; // the same nodes in another file: the editor shows the draft again
        m_ptxFor = -1;
    } else if (!sameSession) {
        m_drafts.clear();
        m_pinned = 0;
        m_node = 0;
        m_ptxFor = -1;
        m_shownNode = 0;
    }
    showStored();
}

void CandidatePane::setNode(std::int64_t node)
{
    if (node == m_node)
        return;
    m_node = node;
    showStored();
}

void CandidatePane::setPinned(std::int64_t node)
{
    m_pinned = node;
    m_metrics->setNodes(m_snapshot, m_node, m_pinned);
    updateButtons();
}

void CandidatePane::showBaselineColumns()
{
    for (int c : {int(MetricsModel::PinnedColumn), int(MetricsModel::DeltaColumn)})
        m_metricsView->setColumnHidden(c, m_metrics->pinned() == 0);
}

void CandidatePane::setGpuUnavailable(const QString &reason)
{
    m_gpuReason = reason;
    updateButtons();
}

void CandidatePane::setGpuBusy(bool busy)
{
    m_gpuBusy = busy;
    updateButtons();
}

QString CandidatePane::source() const { return m_editor->text(); }

bool CandidatePane::edited() const
{
    const NodeView *n = m_snapshot ? m_snapshot->node(m_node) : nullptr;
    return n && n->isCandidate() && m_editor->text() != qs(n->record.text);
}

QList<qint64> CandidatePane::draftNodes() const
{
    QList<qint64> nodes = m_drafts.keys();
    std::sort(nodes.begin(), nodes.end());
    return nodes;
}

QString CandidatePane::draftText(std::int64_t node) const { return m_drafts.value(node); }

void CandidatePane::dropDraft(std::int64_t node)
{
    if (!m_drafts.remove(node) || node != m_node)
        return;
    revert();
}

QString CandidatePane::summaryText() const { return showsSummary() ? m_summary->toPlainText() : QString(); }
bool CandidatePane::showsSummary() const { return m_pages->currentWidget() == m_summary; }
QString CandidatePane::profileHint() const { return m_profileHint->text(); }
QString CandidatePane::headerText() const { return m_header->text(); }

QString CandidatePane::logText() const { return m_log->text(); }
QString CandidatePane::diffText() const { return m_diff->text(); }
QString CandidatePane::ideaText() const { return m_idea->toPlainText(); }

void CandidatePane::showStored()
{
    const NodeView *n = m_snapshot ? m_snapshot->node(m_node) : nullptr;
    m_loading = true;
    if (!n || !n->isCandidate()) {
        m_shownNode = 0;
        m_header->setText(n ? QStringLiteral("<span style='color:%1'>●</span> <b>%2</b> &nbsp; %3")
                                  .arg(statusColor(qs(n->shownStatus)).name(), qs(n->record.title).toHtmlEscaped(),
                                       qs(n->shownStatus))
                            : tr("Select a candidate in the search tree"));
        showSummary(n);
        setText(m_editor, {});
        m_editor->clearDiagnostics();
        setText(m_log, {});
        setText(m_diff, {});
        m_idea->setPlainText(n && n->record.kind == NodeKind::Idea ? qs(n->record.text) : QString());
        m_metrics->setNodes(m_snapshot, 0, m_pinned);
        m_loading = false;
        updateButtons();
        requestExchanges();
        return;
    }
    m_pages->setCurrentWidget(m_tabs);
    const QString status = qs(n->shownStatus);
    QString header = QStringLiteral("<span style='color:%1'>●</span> <b>#%2 %3</b> &nbsp; %4 %5 %6")
                         .arg(statusColor(status).name(), QString::number(n->id()), qs(n->record.title).toHtmlEscaped(),
                              status, formatMs(n->medianMs),
                              n->speedup > 0 ? QStringLiteral("· %1").arg(formatSpeedup(n->speedup)) : QString());
    if (n->sanitizerUnchecked)
        header += QStringLiteral(" &nbsp; <span style='color:%1'>⚠ %2</span>")
                      .arg(uncheckedColor().name(), tr("compute-sanitizer could not check it (unchecked)"));
    m_header->setText(header);
    m_header->setToolTip(statusText(*n));
    // A newer reading of the same, unchanged node leaves the editor, its markers and the log as
    // they are: they may hold the user's edits and the result of a compile check.
    const bool unchanged = m_shownNode == n->id() && m_shownUpdated == n->record.updated;
    m_shownNode = n->id();
    m_shownUpdated = n->record.updated;
    if (!unchanged) {
        const QString text = m_drafts.value(n->id(), qs(n->record.text));
        if (m_editor->text() != text)
            setText(m_editor, text);
        const std::string log = n->result ? n->result->compileLog : std::string();
        m_editor->setDiagnostics(edited() ? std::vector<Diagnostic>{} : diagnosticsFromLog(log));
        setText(m_log, log.empty() ? tr("(no compile log stored for this candidate)") : qs(log));
        markLogLines();
    }
    QString idea = qs(m_snapshot->ideaTitle(n->id()));
    QString ideaHtml = idea.isEmpty()
        ? tr("<p><i>Written by hand; no idea above it.</i></p>")
        : QStringLiteral("<h3>%1</h3><p>%2</p>")
              .arg(idea.toHtmlEscaped(), qs(m_snapshot->ideaText(n->id())).toHtmlEscaped());
    if (const NodeView *i = m_snapshot->node(n->ideaNode); i && !i->record.reason.empty())
        ideaHtml += tr("<p><b>Why:</b> %1</p>").arg(qs(i->record.reason).toHtmlEscaped());
    if (!n->record.reason.empty())
        ideaHtml += tr("<p><b>Verdict:</b> %1: %2</p>").arg(status, qs(n->record.reason).toHtmlEscaped());
    if (n->result && !n->result->sanitizerReport.empty()) // the sanitizer gate's finding, as the tool wrote it
        ideaHtml +=
            tr("<p><b>compute-sanitizer:</b></p><pre>%1</pre>").arg(qs(n->result->sanitizerReport).toHtmlEscaped());
    m_idea->setHtml(ideaHtml);
    m_metrics->setNodes(m_snapshot, m_node, m_pinned);
    m_loading = false;
    updateDiff();
    updateButtons();
    if (m_profiledNode != m_node) // what the tab shows is about another candidate
        m_profilePages->setCurrentWidget(m_profileHint);
    if (m_ptxFor != m_node) {
        setText(m_ptx, tr("Open this tab to compile the candidate with NVRTC and show its PTX."));
        setText(m_sass, {});
    }
    requestLazyCompile();
    requestExchanges();
}

void CandidatePane::showSummary(const NodeView *n)
{
    m_pages->setCurrentWidget(m_summary);
    if (!n || !m_snapshot) {
        m_summary->setHtml(
            tr("<p>Select a round, an idea or a candidate in the search tree, the graph, the chart or the "
               "trajectory.</p>"));
        return;
    }
    m_summary->setHtml(summaryHtml(*m_snapshot, *n) +
                       tr("<p style='color:#666'>Select a candidate to see its source, compile log and metrics.</p>"));
}

void CandidatePane::updateProfileHint()
{
    static const bool ncu = !findCudaTool(QStringLiteral("ncu")).isEmpty(); // looked up once
    QString text = tr("<p><b>Profile</b> (Ctrl+Shift+P) runs the selected candidate once under Nsight Compute "
                      "(<tt>ncu</tt>) through the worker, and shows here its duration, SM, memory and DRAM throughput, "
                      "achieved occupancy, the top warp-stall reasons and its position under the roofline.</p>"
                      "<p>It needs an NVIDIA GPU and Nsight Compute.</p>");
    QStringList missing;
    if (!ncu)
        missing << tr("Nsight Compute (<tt>ncu</tt>) is not installed: it comes with the CUDA toolkit, or as the "
                      "nsight-compute package");
    if (!m_gpuReason.isEmpty())
        missing << tr("Running kernels is unavailable: %1").arg(m_gpuReason.toHtmlEscaped());
    if (!missing.isEmpty())
        text += tr("<p><b>Here:</b></p><ul><li>%1</li></ul>").arg(missing.join(QStringLiteral("</li><li>")));
    else
        text += tr("<p>Select a candidate and press Profile.</p>");
    m_profileHint->setText(text);
}

void CandidatePane::markLogLines()
{
    // Lines that name a line of the source are links: a click shows that line in the editor.
    m_logTargets.clear();
    m_log->clearIndicatorRange(0, 0, m_log->lines(), 0, kLogLinkIndicator);
    for (int i = 0; i < m_log->lines(); ++i) {
        const QString line = m_log->text(i);
        if (const int target = sourceLineOf(line)) {
            m_logTargets.insert(i, target - 1);
            m_log->fillIndicatorRange(i, 0, i, int(line.trimmed().size()), kLogLinkIndicator);
        }
    }
}

void CandidatePane::jumpToSourceLine(int line)
{
    m_tabs->setCurrentIndex(SourceTab);
    m_editor->setCursorPosition(line, 0);
    m_editor->ensureLineVisible(line);
    m_editor->setFocus();
}

std::int64_t CandidatePane::diffBase() const
{
    const NodeView *n = m_snapshot ? m_snapshot->node(m_node) : nullptr;
    if (!n)
        return 0;
    if (n->record.parent)
        if (const NodeView *p = m_snapshot->node(*n->record.parent); p && p->isCandidate())
            return p->id(); // a repair or a hand edit: the candidate it came from
    if (const NodeView *idea = m_snapshot->node(n->ideaNode))
        return readIdeaInfo(idea->record).parentKernel; // a first draft: the kernel its idea builds on
    return 0;
}

void CandidatePane::updateDiff()
{
    const NodeView *n = m_snapshot ? m_snapshot->node(m_node) : nullptr;
    if (!n || !n->isCandidate()) {
        setText(m_diff, {});
        return;
    }
    const NodeView *base = m_snapshot->node(diffBase());
    QString text;
    if (base)
        text = unifiedDiff(
            qs(base->record.text), m_editor->text(),
            QStringLiteral("#%1 %2").arg(base->id()).arg(qs(base->record.title)),
            QStringLiteral("#%1 %2%3").arg(n->id()).arg(qs(n->record.title), edited() ? tr(" (edited)") : QString()));
    else if (edited())
        text = unifiedDiff(qs(n->record.text), m_editor->text(), tr("#%1 as stored").arg(n->id()), tr("editor"));
    if (text.isEmpty())
        text = base ? tr("(same source as its parent #%1)").arg(base->id())
                    : tr("(this candidate was written from the reference; it has no parent kernel)");
    setText(m_diff, text);
}

void CandidatePane::updateButtons()
{
    updateProfileHint();
    const NodeView *n = m_snapshot ? m_snapshot->node(m_node) : nullptr;
    const bool candidate = n && n->isCandidate();
    m_check->setEnabled(candidate);
    m_revert->setEnabled(candidate && edited());
    m_pin->setEnabled(candidate);
    m_pin->setText(candidate && m_pinned == m_node ? tr("Unpin baseline") : tr("Pin as baseline"));
    m_export->setEnabled(candidate);
    m_export->setToolTip(candidate && edited()
                             ? tr("A standalone .cu of the stored kernel #%1, without the editor's unsaved edits "
                                  "(File ▸ Save edited source as .cu keeps those) (Ctrl+E)")
                                   .arg(m_node)
                             : tr("A standalone .cu with a host launcher (Ctrl+E)"));
    // Profiling only reads the session; re-benchmarking adds a node to it.
    QString gpuWhy;
    if (!m_gpuReason.isEmpty())
        gpuWhy = m_gpuReason;
    else if (m_gpuBusy)
        gpuWhy = tr("the GPU is busy with a search or another benchmark");
    QString why = gpuWhy;
    if (why.isEmpty() && m_snapshot && m_snapshot->readOnly)
        why = tr("this session is read-only (a shipped example or a protected file): use Save As to continue it");
    m_rebench->setEnabled(candidate && why.isEmpty());
    m_rebench->setToolTip(
        why.isEmpty()
            ? tr("Compile, verify and time the editor's source; it becomes a new child marked hand-edited (Ctrl+R)")
            : tr("Re-benchmark is unavailable: %1").arg(why));
    static const bool ncu = !findCudaTool(QStringLiteral("ncu")).isEmpty(); // looked up once
    m_profile->setEnabled(candidate && gpuWhy.isEmpty() && ncu);
    m_profile->setToolTip(!ncu                   ? tr("Profile needs Nsight Compute (ncu), which is not installed")
                              : gpuWhy.isEmpty() ? tr("Run the candidate under Nsight Compute through the worker")
                                                 : tr("Profile is unavailable: %1").arg(gpuWhy));
}

void CandidatePane::requestLazyCompile()
{
    // PTX and SASS are not stored in sessions; they are compiled (from the disk cache when it can)
    // the first time their tab is looked at for a candidate.
    const int tab = m_tabs->currentIndex();
    if ((tab != PtxTab && tab != SassTab) || m_ptxFor == m_node || !m_snapshot || !m_snapshot->node(m_node) ||
        !m_snapshot->node(m_node)->isCandidate())
        return;
    m_ptxFor = m_node;
    setText(m_ptx, tr("Compiling with NVRTC…"));
    emit compileRequested(m_editor->text().toStdString(), m_node);
}

void CandidatePane::requestExchanges()
{
    const NodeView *n = m_snapshot ? m_snapshot->node(m_node) : nullptr;
    if (!n || (n->record.kind != NodeKind::Idea && !n->isCandidate())) {
        m_exchangesKey.clear();
        m_exchanges->showMessage(tr("Select an idea or a candidate to see the model exchanges that produced it."));
        return;
    }
    // Read when the tab is looked at, and again when the node changes (a search links exchanges
    // to an idea as its implementations come back).
    if (m_tabs->currentIndex() != ExchangesTab)
        return;
    const std::string key = m_snapshot->path + '#' + std::to_string(n->id()) + '@' + n->record.updated;
    if (key == m_exchangesKey)
        return;
    const bool sameNode = m_exchangesKey.rfind(m_snapshot->path + '#' + std::to_string(n->id()) + '@', 0) == 0;
    m_exchangesKey = key;
    if (!sameNode) // a newer reading of the same node keeps what is shown until it comes
        m_exchanges->showMessage(tr("Reading the exchanges…"));
    emit exchangesRequested(n->id());
}

QString CandidatePane::noExchangesText(const NodeView &n) const
{
    if (n.record.edited)
        return tr("This candidate was written by hand; it has no model exchanges.");
    // Ideas record the generator that proposed them; a session may have been continued with another.
    std::string g;
    if (const NodeView *idea = m_snapshot->node(n.record.kind == NodeKind::Idea ? n.id() : n.ideaNode))
        g = readIdeaInfo(idea->record).generator;
    if (g.empty())
        g = m_snapshot->meta.generator;
    if (g.empty() || g == "builtin")
        return tr("This node was produced by the built-in generator; it has no model exchanges.");
    return tr("No model exchanges are recorded for this node.");
}

void CandidatePane::showExchanges(const ExchangesPtr &e)
{
    const NodeView *n = m_snapshot ? m_snapshot->node(m_node) : nullptr;
    if (!e || !n || e->node != m_node || e->path != m_snapshot->path)
        return; // about a node or a session no longer shown
    if (!e->error.empty()) {
        m_exchanges->showMessage(tr("The exchanges could not be read: %1").arg(qs(e->error)));
        return;
    }
    m_exchanges->setExchanges(e, noExchangesText(*n));
}

void CandidatePane::compileCheck()
{
    const NodeView *n = m_snapshot ? m_snapshot->node(m_node) : nullptr;
    if (!n || !n->isCandidate())
        return;
    m_ptxFor = m_node;
    m_checkAsked = true;
    m_checkClock = std::make_unique<QElapsedTimer>();
    m_checkClock->start();
    setText(m_log, tr("Compiling with NVRTC…"));
    markLogLines();
    emit compileStarted(m_node);
    emit compileRequested(m_editor->text().toStdString(), m_node);
}

void CandidatePane::rebenchmark()
{
    m_rebenchAfterCompile = true;
    compileCheck();
}

void CandidatePane::revert()
{
    m_drafts.remove(m_node);
    m_shownNode = 0; // show the stored source, markers and log again
    const NodeView *n = m_snapshot ? m_snapshot->node(m_node) : nullptr;
    if (n)
        setText(m_editor, qs(n->record.text));
    showStored();
}

void CandidatePane::showCompileReport(const CompileReport &r)
{
    if (r.node != m_node)
        return; // an answer about a candidate no longer shown
    const bool rebench = m_rebenchAfterCompile;
    const bool asked = m_checkAsked;
    m_rebenchAfterCompile = m_checkAsked = false;
    const double seconds = m_checkClock ? m_checkClock->elapsed() / 1000.0 : r.seconds;
    if (!r.ran) {
        setText(m_log, tr("The compile check could not run: %1").arg(r.error));
        setText(m_ptx, tr("No PTX: %1").arg(r.error));
        markLogLines();
        if (asked)
            emit compileFinished(r.node, tr("the compile check could not run: %1").arg(r.error), false);
        return;
    }
    m_editor->setDiagnostics(r.diagnostics);
    // "2 errors, 1 warning, 0.99 s": what the status bar and the log say too.
    const QString summary = QStringLiteral("%1, %2, %3 s%4")
                                .arg(plural(m_editor->errorCount(), tr("error"), tr("errors")),
                                     plural(m_editor->warningCount(), tr("warning"), tr("warnings")))
                                .arg(seconds, 0, 'f', 2)
                                .arg(r.cached ? tr(" (cached)") : QString());
    QString log = r.log;
    if (r.ok)
        log = tr("Compiled for %1: %2.\n\n").arg(r.arch, summary) + log;
    else
        log = tr("Compile failed: %1.\n\n").arg(summary) + log;
    setText(m_log, log);
    markLogLines();
    setText(m_ptx, r.ok ? r.ptx : tr("No PTX: the source does not compile (see the compile log)."));
    setText(m_sass,
            !r.sass.isEmpty() ? r.sass
                : r.ok        ? tr("SASS needs cuobjdump from the CUDA toolkit, which is not installed.")
                              : QString());
    if (asked && !r.ok) {
        // Show the first error: on its line when it has one, else in the log.
        int first = 0;
        for (const Diagnostic &d : r.diagnostics)
            if (d.severity != "warning" && d.line > 0 && d.line <= m_editor->lines()) {
                first = d.line;
                break;
            }
        if (first)
            jumpToSourceLine(first - 1);
        else
            m_tabs->setCurrentIndex(LogTab);
    } else if (!r.ok && m_tabs->currentIndex() != PtxTab && m_tabs->currentIndex() != SassTab) {
        m_tabs->setCurrentIndex(SourceTab);
    }
    if (asked)
        emit compileFinished(r.node, summary, r.ok);
    if (rebench && r.ok) {
        const NodeView *n = m_snapshot ? m_snapshot->node(m_node) : nullptr;
        const QString title = n ? tr("edit of #%1 %2").arg(n->id()).arg(qs(n->record.title)) : tr("hand-written");
        emit rebenchmarkRequested(m_node, m_editor->text().toStdString(), title);
    }
}

void CandidatePane::showProfile(const ProfileReport &r)
{
    if (r.node != m_node)
        return; // about a candidate no longer shown
    m_profilePages->setCurrentWidget(m_profileView);
    m_profileModel->removeRows(0, m_profileModel->rowCount());
    if (!r.ok) {
        m_profileModel->appendRow({new QStandardItem(tr("Profile failed")), new QStandardItem(r.error)});
        return;
    }
    for (const auto &[name, value] : r.metrics)
        m_profileModel->appendRow({new QStandardItem(name), new QStandardItem(value)});
    for (int i = 0; i < r.stalls.size(); ++i)
        m_profileModel->appendRow({new QStandardItem(tr("Warp stall #%1").arg(i + 1)), new QStandardItem(r.stalls[i])});
    const NodeView *n = m_snapshot ? m_snapshot->node(r.node) : nullptr;
    if (n && n->percentOfFloor > 0)
        m_profileModel->appendRow(
            {new QStandardItem(tr("Roofline position")),
             new QStandardItem(tr("%1 of the floor's speed").arg(formatPercent(n->percentOfFloor)))});
    m_profileView->resizeColumnToContents(0);
}

} // namespace kf::ui
