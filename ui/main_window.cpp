#include "main_window.h"

#include "candidate_pane.h"
#include "gen/factory.h"
#include "graph_view.h"
#include "message_bar.h"
#include "model/floors.h"
#include "model/format.h"
#include "model/outline_filter.h"
#include "model/outline_model.h"
#include "model/points_model.h"
#include "model/roles.h"
#include "model/status_style.h"
#include "model/trajectory_model.h"
#include "problem_page.h"
#include "round_chart.h"
#include "search_panel.h"
#include "settings.h"
#include "trajectory_view.h"

#include <QAction>
#include <QCloseEvent>
#include <QComboBox>
#include <QDockWidget>
#include <QFileInfo>
#include <QFontDatabase>
#include <QGuiApplication>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QScreen>
#include <QScrollArea>
#include <QSplitter>
#include <QStatusBar>
#include <QTabWidget>
#include <QTimer>
#include <QTreeView>
#include <QVBoxLayout>

#include <algorithm>
#include <functional>

namespace kf::ui {

MainWindow::MainWindow(Settings *settings, Engine *engine, QWidget *parent)
    : QMainWindow(parent), m_settings(settings), m_engine(engine)
{
    setWindowTitle(tr("KernelForge"));
    setWindowIcon(QIcon(QStringLiteral(":/kernelforge/kernelforge.png")));
    setObjectName(QStringLiteral("mainWindow"));
    buildViews();
    buildActions();
    buildMenus();
    connectEngine();

    EngineConfig config = m_engine->config();
    config.workerArgv = splitCommandLine(m_settings->workerCommand().toStdString());
    m_engine->setConfig(config);
    m_search->setSettings(m_settings->searchSettings());
    for (const std::string &name : generatorNames())
        m_search->setGeneratorChoice(m_settings->generatorChoice(qs(name)));
    m_search->setGenerator(m_settings->generator());
    m_search->setWorkerCommand(m_settings->workerCommand());

    fitToScreen();
    applyDefaultDockSizes();
    m_defaultState = saveState(Settings::kWindowStateVersion);
    if (restoreGeometry(m_settings->windowGeometry()) && screen() &&
        !screen()->availableGeometry().contains(frameGeometry()))
        fitToScreen(); // saved on a larger screen than this one
    restoreState(m_settings->windowState(), Settings::kWindowStateVersion);

    m_gpuBanner->showMessage(MessageBar::Kind::Info, tr("Looking for an NVIDIA GPU through kernelforge-worker…"));
    m_engine->probeGpu();
    m_engine->listProblems(m_settings->problemFolders());
    m_candidate->hide();
    updateActions();
    updateTitle();
}

MainWindow::~MainWindow() = default;

void MainWindow::buildViews()
{
    QWidget *outlinePane = buildOutline();
    connectOutline();
    buildViewTabs();
    buildCentre();
    buildDocks(outlinePane);
    connectSelection();
    connectCandidatePane();
    connectProblemPage();
    connectSearchPanel();
}

QWidget *MainWindow::buildOutline()
{
    m_outlineModel = new OutlineModel(this);
    m_filter = new OutlineFilter(this);
    m_filter->setSourceModel(m_outlineModel);
    m_outline = new QTreeView(this);
    m_outline->setObjectName(QStringLiteral("outline"));
    m_outline->setModel(m_filter);
    m_outline->setSortingEnabled(true);
    m_outline->sortByColumn(OutlineModel::NameColumn, Qt::AscendingOrder);
    m_outline->setUniformRowHeights(true);
    m_outline->setAlternatingRowColors(true);
    // The parameters that tell siblings apart have a column of their own, which takes what the
    // name and the numbers leave; the tooltip shows everything.
    m_outline->header()->setStretchLastSection(false);
    m_outline->header()->setSectionResizeMode(OutlineModel::NameColumn, QHeaderView::Interactive);
    m_outline->header()->resizeSection(OutlineModel::NameColumn, 115);
    m_outline->setIndentation(14); // three levels deep, "#123" still shows beside its dot
    m_outline->header()->setSectionResizeMode(OutlineModel::DetailsColumn, QHeaderView::Stretch);
    for (int c = OutlineModel::StatusColumn; c < OutlineModel::ColumnCount; ++c)
        m_outline->header()->setSectionResizeMode(c, QHeaderView::ResizeToContents);
    m_outline->header()->setMinimumSectionSize(40);
    m_outline->setColumnHidden(OutlineModel::StatusColumn, true); // the icon and the tooltip say it
    m_outline->viewport()->installEventFilter(this);              // a narrow outline drops "% of floor" (eventFilter)
    m_show = new QComboBox(this);
    m_show->setObjectName(QStringLiteral("statusFilter"));
    m_show->setToolTip(tr("Show the candidates of one status (rounds and ideas above them stay)"));
    using Show = OutlineFilter::Show;
    for (const auto &[text, show] :
         {std::pair{tr("All"), Show::All}, std::pair{tr("Correct"), Show::Correct},
          std::pair{tr("Failed (any)"), Show::Failed}, std::pair{tr("Needs GPU"), Show::NeedsGpu},
          std::pair{tr("Queued or running"), Show::Pending}, std::pair{tr("Hand-edited"), Show::HandEdited},
          std::pair{tr("Sanitizer unchecked"), Show::Unchecked}})
        m_show->addItem(show == Show::Unchecked      ? statusIcon(QStringLiteral("correct"), true)
                            : show == Show::NeedsGpu ? statusIcon(QStringLiteral("needs gpu"))
                                                     : QIcon(),
                        text, int(show));
    m_show->insertSeparator(m_show->count());
    for (const QString &status : candidateStatuses()) {
        m_show->addItem(statusIcon(status), tr("Only: %1").arg(status), int(Show::Status));
        m_show->setItemData(m_show->count() - 1, status, Qt::UserRole + 1);
    }
    m_find = new QLineEdit(this);
    m_find->setPlaceholderText(tr("Find in names and parameters"));
    m_find->setClearButtonEnabled(true);
    auto *outlinePane = new QWidget(this);
    outlinePane->setMinimumWidth(240);
    auto *ol = new QVBoxLayout(outlinePane);
    ol->setContentsMargins(2, 2, 2, 2);
    auto *filterRow = new QHBoxLayout;
    filterRow->addWidget(m_show);
    filterRow->addWidget(m_find, 1);
    ol->addLayout(filterRow);
    ol->addWidget(m_outline, 1);
    return outlinePane;
}

void MainWindow::connectOutline()
{
    // Rounds that appear while a search runs open by themselves; what the user expanded or
    // collapsed stays so (expandToDepth would reset it).
    connect(m_filter, &QAbstractItemModel::rowsInserted, this, [this](const QModelIndex &parent, int first, int last) {
        if (!parent.isValid())
            for (int r = first; r <= last; ++r)
                m_outline->expand(m_filter->index(r, 0));
    });
    connect(m_show, &QComboBox::currentIndexChanged, this, [this] {
        m_filter->setShow(OutlineFilter::Show(m_show->currentData().toInt()),
                          m_show->currentData(Qt::UserRole + 1).toString());
        m_outline->expandAll();
        syncGraphExpansion();
    });
    connect(m_find, &QLineEdit::textChanged, this, [this](const QString &t) {
        m_filter->setText(t);
        m_outline->expandAll();
        syncGraphExpansion();
    });
    // The graph expands what the outline expands, once the outline has settled.
    auto scheduleSync = [this] {
        if (m_graphSyncPending)
            return;
        m_graphSyncPending = true;
        QTimer::singleShot(0, this, [this] { syncGraphExpansion(); });
    };
    connect(m_outline, &QTreeView::expanded, this, scheduleSync);
    connect(m_outline, &QTreeView::collapsed, this, scheduleSync);
}

void MainWindow::buildViewTabs()
{
    m_graph = new GraphView(this);
    m_graph->setObjectName(QStringLiteral("graph"));
    connect(m_graph, &GraphView::expansionRequested, this, [this](std::int64_t node, bool expand) {
        const QModelIndex proxy = m_filter->mapFromSource(m_outlineModel->indexOf(node));
        if (proxy.isValid()) {
            m_outline->setExpanded(proxy, expand); // the graph follows the outline
            syncGraphExpansion();
            return;
        }
        QSet<qint64> expanded = m_graph->expandedNodes(); // a node the filter hides in the outline
        if (expand)
            expanded.insert(node);
        else
            expanded.remove(node);
        m_graph->setExpandedNodes(expanded);
    });
    m_trajectoryModel = new TrajectoryModel(this);
    m_points = new PointsModel(this);
    m_chart = new RoundChart(m_trajectoryModel, m_points, this);
    m_trajectoryView = new TrajectoryView(m_trajectoryModel, this);
    m_problems = new ProblemPage(this);
    m_views = new QTabWidget(this);
    m_views->setObjectName(QStringLiteral("views"));
    m_views->setDocumentMode(true);
    m_views->addTab(m_graph, tr("Graph"));
    m_views->addTab(m_chart, tr("Chart"));
    m_views->addTab(m_trajectoryView, tr("Trajectory"));
    m_views->addTab(m_problems, tr("Problems"));
}

void MainWindow::buildCentre()
{
    m_candidate = new CandidatePane(this);

    m_message = new MessageBar(this);
    m_message->setObjectName(QStringLiteral("messageBar"));
    m_gpuBanner = new MessageBar(this);
    m_gpuBanner->setObjectName(QStringLiteral("gpuBanner"));
    m_gpuBanner->setClosable(false);

    m_split = new QSplitter(Qt::Vertical, this);
    m_split->addWidget(m_views);
    m_split->addWidget(m_candidate);
    m_split->setStretchFactor(0, 2);
    m_split->setStretchFactor(1, 3);
    m_split->setChildrenCollapsible(false);
    m_views->setMinimumHeight(120);
    m_candidate->setMinimumHeight(160);
    auto *central = new QWidget(this);
    auto *cl = new QVBoxLayout(central);
    cl->setContentsMargins(4, 4, 4, 0);
    cl->addWidget(m_gpuBanner);
    cl->addWidget(m_message);
    cl->addWidget(m_split, 1);
    setCentralWidget(central);
}

void MainWindow::buildDocks(QWidget *outlinePane)
{
    auto dock = [this](const QString &title, const QString &name, QWidget *w, Qt::DockWidgetArea area) {
        auto *d = new QDockWidget(title, this);
        d->setObjectName(name);
        d->setWidget(w);
        addDockWidget(area, d);
        return d;
    };
    dock(tr("Search tree"), QStringLiteral("outlineDock"), outlinePane, Qt::LeftDockWidgetArea);
    m_search = new SearchPanel(this);
    // The panel is often taller (a language model's fields, a laptop screen) or wider than its
    // dock: it scrolls then, both ways, rather than cutting fields off.
    auto *searchScroll = new QScrollArea(this);
    searchScroll->setObjectName(QStringLiteral("searchScroll"));
    searchScroll->setWidget(m_search);
    searchScroll->setWidgetResizable(true);
    searchScroll->setFrameShape(QFrame::NoFrame);
    searchScroll->setMinimumWidth(160);
    dock(tr("Search"), QStringLiteral("searchDock"), searchScroll, Qt::RightDockWidgetArea);
    m_console = new QPlainTextEdit(this);
    m_console->setObjectName(QStringLiteral("console"));
    m_console->setReadOnly(true);
    m_console->setMaximumBlockCount(5000);
    m_console->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    m_console->setMinimumHeight(40);
    dock(tr("Log"), QStringLiteral("logDock"), m_console, Qt::BottomDockWidgetArea);
    m_sessionLabel = new QLabel(this);
    m_sessionLabel->setObjectName(QStringLiteral("sessionStatus"));
    m_sessionLabel->setMinimumWidth(0);
    statusBar()->addPermanentWidget(m_sessionLabel, 1);
}

// The shared selection.
void MainWindow::connectSelection()
{
    connect(m_outline->selectionModel(), &QItemSelectionModel::currentRowChanged, this, [this](const QModelIndex &i) {
        if (!m_selecting && i.isValid())
            selectNode(i.data(NodeIdRole).toLongLong());
    });
    connect(m_graph, &GraphView::nodeSelected, this, &MainWindow::selectNode);
    connect(m_chart, &RoundChart::nodeClicked, this, &MainWindow::selectNode);
    connect(m_trajectoryView, &TrajectoryView::nodeActivated, this, &MainWindow::selectNode);
    connect(m_trajectoryView, &TrajectoryView::message, this,
            [this](const QString &t, bool error) { error ? showError(tr("Export CSV"), t) : showInfo(t); });
}

void MainWindow::connectCandidatePane()
{
    connect(m_candidate, &CandidatePane::compileRequested, m_engine, &Engine::compileCheck);
    connect(m_candidate, &CandidatePane::rebenchmarkRequested, this,
            [this](std::int64_t parent, const std::string &source, const QString &title) {
                log(tr("Re-benchmarking an edit of #%1…").arg(parent));
                m_rebenchParent = parent;
                m_engine->rebenchmark(parent, source, title);
            });
    // A compile check says what it does where people look: the status bar and the log.
    connect(m_candidate, &CandidatePane::compileStarted, this, [this](std::int64_t node) {
        statusBar()->showMessage(tr("Compiling #%1 with NVRTC…").arg(node));
        log(tr("Compile check of #%1…").arg(node));
    });
    connect(m_candidate, &CandidatePane::compileFinished, this,
            [this](std::int64_t node, const QString &summary, bool) {
                const QString text = tr("Compile check of #%1: %2").arg(node).arg(summary);
                statusBar()->showMessage(text, 30000);
                log(text);
            });
    connect(m_candidate, &CandidatePane::pinRequested, this, [this](std::int64_t node) {
        m_candidate->setPinned(node);
        if (node)
            showInfo(
                tr("Pinned #%1 as the baseline: the Metrics tab shows it beside the selected candidate").arg(node));
    });
    connect(m_candidate, &CandidatePane::exportRequested, this, [this] { onExportSelected(); });
    connect(m_candidate, &CandidatePane::profileRequested, m_engine, &Engine::profile);
    connect(m_candidate, &CandidatePane::exchangesRequested, m_engine, &Engine::loadExchanges);
}

void MainWindow::connectProblemPage()
{
    connect(m_problems, &ProblemPage::newSessionRequested, this, [this] { onNew(); });
    connect(m_problems, &ProblemPage::addFolderRequested, this, &MainWindow::onAddProblemFolder);
}

void MainWindow::connectSearchPanel()
{
    connect(m_search, &SearchPanel::startRequested, this, &MainWindow::onStart);
    connect(m_search, &SearchPanel::cancelRequested, m_engine, &Engine::cancel);
    connect(m_search, &SearchPanel::inputChanged, this, &MainWindow::updateActions);
    connect(m_search, &SearchPanel::workerCommandChanged, this, [this](const QString &c) {
        m_settings->setWorkerCommand(c);
        EngineConfig config = m_engine->config();
        config.workerArgv = splitCommandLine(c.toStdString());
        m_engine->setConfig(config);
        m_engine->probeGpu();
    });
}

void MainWindow::connectEngine()
{
    connect(m_engine, &Engine::gpuChecked, this, [this](const GpuStatus &g) {
        if (g.present) {
            m_gpuBanner->hide();
            m_problems->setLocalGpu(g.name);
            log(tr("GPU: %1 (%2)").arg(g.name, g.arch));
        } else {
            m_gpuBanner->showMessage(MessageBar::Kind::Warning,
                                     tr("<b>No NVIDIA GPU available</b> (%1). Browsing problems, opening sessions, "
                                        "editing, compile checks with NVRTC, compile-only searches and export work; "
                                        "searches, re-benchmarks and profiles need a GPU.")
                                         .arg(g.reason.toHtmlEscaped()));
            log(tr("No GPU: %1").arg(g.reason));
        }
        updateActions();
    });
    connect(m_engine, &Engine::problemsListed, this, [this](const ProblemListPtr &list) {
        m_problems->setProblems(list);
        if (!m_session)
            showView(ProblemsTab);
    });
    connect(m_engine, &Engine::sessionOpened, this, [this](const SnapshotPtr &s) { setSession(s, true); });
    connect(m_engine, &Engine::sessionUpdated, this, [this](const SnapshotPtr &s) { setSession(s, false); });
    connect(m_engine, &Engine::sessionFailed, this, [this](const QString &path, const QString &message) {
        showError(tr("Cannot open %1").arg(path), message);
        log(tr("Cannot open %1: %2").arg(path, message));
        if (!QFileInfo::exists(path))
            m_settings->removeRecentFile(path); // a recent file that was moved or deleted
    });
    connect(m_engine, &Engine::compileChecked, m_candidate, &CandidatePane::showCompileReport);
    connect(m_engine, &Engine::profiled, m_candidate, &CandidatePane::showProfile);
    connect(m_engine, &Engine::exchangesLoaded, m_candidate, &CandidatePane::showExchanges);
    connect(m_engine, &Engine::searchStarted, this, [this] {
        m_search->setRunning(true);
        log(tr("Search started"));
        updateActions();
    });
    connect(m_engine, &Engine::searchEvent, this, [this](const QString &line) { log(line); });
    connect(m_engine, &Engine::searchProgress, m_search, &SearchPanel::showProgress);
    connect(m_engine, &Engine::searchProgress, m_chart,
            [this](const SearchProgress &p) { m_chart->setLiveStatus(p.live); });
    connect(m_engine, &Engine::searchFinished, this,
            [this](const QString &reason, bool failed, const QString &summary) {
                m_search->setRunning(false);
                m_search->showFinished(summary, failed);
                m_chart->setLiveStatus({});
                log(failed ? tr("Search failed: %1").arg(reason) : summary);
                if (failed)
                    showError(tr("Search"), reason);
                else
                    showInfo(summary);
                updateActions();
            });
    connect(m_engine, &Engine::rebenchmarked, this, [this](std::int64_t node, const QString &verdict) {
        // The edit is in the session now, as the new node: it is no longer unsaved.
        m_candidate->dropDraft(m_rebenchParent);
        m_rebenchParent = 0;
        log(tr("Re-benchmark: #%1 %2").arg(node).arg(verdict));
        showInfo(tr("The edited kernel is #%1: %2").arg(node).arg(verdict));
        // A periodic refresh may already have read the new node; then no later reading brings news.
        if (m_session && m_session->node(node))
            selectNode(node);
        else
            m_selectAfterRefresh = node;
    });
    connect(m_engine, &Engine::finished, this, [this](const QString &m) {
        showInfo(m);
        log(m);
    });
    connect(m_engine, &Engine::failed, this, [this](const QString &what, const QString &m) {
        showError(what, m);
        log(what + QStringLiteral(": ") + m);
    });
    connect(m_engine, &Engine::busyChanged, this, [this](bool busy) {
        m_candidate->setGpuBusy(busy);
        updateActions();
    });
}

void MainWindow::setSession(const SnapshotPtr &s, bool fresh)
{
    m_session = s;
    if (fresh || !s)
        m_search->clearFinished(); // the last run's message was about another session
    m_problems->setSessionFloors(s ? qs(s->meta.problemName) : QString(), s ? sessionFloorsText(*s) : QString());
    if (fresh) {
        m_selected = 0;
        m_message->hide();
        m_settings->addRecentFile(qs(s->path));
        if (s->problem)
            m_problems->selectProblem(qs(s->problem->name));
        m_search->setSettings(s->settings);
        if (!s->meta.generator.empty() && s->meta.generator != "manual") {
            // The server and model the session used, so that Start continues with the same.
            const QString name = qs(s->meta.generator);
            m_search->setGeneratorChoice(withSessionSettings(m_search->generatorChoice(name), s->generatorSettings));
            m_search->setGenerator(name);
        }
        log(tr("Opened %1 (%2, %3 nodes%4)")
                .arg(qs(s->path), qs(s->meta.problemName))
                .arg(s->nodes.size())
                .arg(s->readOnly ? tr(", read-only") : QString()));
        if (!s->problemError.empty())
            showError(tr("The session's problem"), qs(s->problemError));
    }
    // Nothing to show in the candidate pane before a session is open. A splitter gives a child
    // that was hidden no room when it comes back, so the shares are set again.
    if (bool(s) != m_candidate->isVisibleTo(this)) {
        m_candidate->setVisible(bool(s));
        if (s) {
            const int h = std::max(600, m_split->height());
            m_split->setSizes({h / 2, h / 2});
        }
    }
    m_selecting = true;
    m_outlineModel->setSnapshot(s);
    m_trajectoryModel->setSnapshot(s);
    m_points->setSnapshot(s);
    m_chart->setReferenceLines(s ? s->eagerMs : 0, s ? s->compiledMs : 0);
    m_graph->setSnapshot(s);
    m_candidate->setSnapshot(s);
    m_selecting = false;
    if (fresh) {
        m_outline->expandToDepth(0);
        if (m_views->currentIndex() == ProblemsTab)
            showView(GraphTab);
        m_graph->fit();
        selectNode(s && s->bestNode ? s->bestNode : 0);
        syncGraphExpansion();
    } else {
        const std::int64_t next =
            m_selectAfterRefresh && s->node(m_selectAfterRefresh) ? m_selectAfterRefresh : m_selected;
        if (next == m_selectAfterRefresh)
            m_selectAfterRefresh = 0;
        m_selected = 0;
        selectNode(next);
    }
    updateActions();
    updateTitle();
}

void MainWindow::selectNode(std::int64_t node)
{
    if (m_selecting || (node == m_selected && node != 0 && m_candidate->node() == node))
        return;
    m_selecting = true;
    m_selected = node;
    const QModelIndex source = m_outlineModel->indexOf(node);
    const QModelIndex proxy = m_filter->mapFromSource(source);
    if (proxy.isValid()) {
        m_outline->setCurrentIndex(proxy);
        m_outline->scrollTo(proxy);
    } else {
        m_outline->clearSelection();
    }
    m_graph->selectNode(node);
    m_chart->selectNode(node);
    m_candidate->setNode(node);
    m_selecting = false;
    updateActions();
}

void MainWindow::showView(View v) { m_views->setCurrentIndex(v); }

void MainWindow::showError(const QString &what, const QString &message)
{
    m_message->showMessage(MessageBar::Kind::Error,
                           QStringLiteral("<b>%1</b>: %2").arg(what.toHtmlEscaped(), message.toHtmlEscaped()));
}

void MainWindow::showInfo(const QString &message)
{
    m_message->showMessage(MessageBar::Kind::Info, message.toHtmlEscaped(), 8000);
}

void MainWindow::log(const QString &line) { m_console->appendPlainText(line); }

QString MainWindow::startBlockedReason(bool withFields) const
{
    const GpuStatus &g = m_engine->gpu();
    if (!m_session)
        return tr("open or create a session first (File ▸ New or Open)");
    if (m_session->readOnly)
        return tr("this session is read-only (a shipped example or a protected file): use Save As to continue it");
    // A compile-only search needs a worker (it loads the problem on the CPU), not a GPU.
    const bool compileOnly = m_search->settings().compileOnly;
    if (g.checked && !g.present && !compileOnly)
        return tr("searches need an NVIDIA GPU: %1 (or check Compile only)").arg(g.reason);
    if (!g.checked)
        return tr("still looking for a GPU");
    if (withFields && !m_search->problem().isEmpty())
        return m_search->problem();
    return {};
}

void MainWindow::updateTitle()
{
    if (!m_session) {
        setWindowTitle(tr("KernelForge"));
        m_sessionLabel->setText(tr("No session open"));
        return;
    }
    setWindowTitle(
        tr("%1 – %2 – KernelForge").arg(QFileInfo(qs(m_session->path)).fileName(), qs(m_session->meta.problemName)));
    QString status = qs(m_session->path);
    if (m_session->readOnly)
        status += tr("  (read-only)");
    if (!m_session->meta.gpuName.empty())
        status += tr("  · recorded on %1").arg(qs(m_session->meta.gpuName));
    if (m_session->eagerMs > 0)
        status += tr("  · eager %1").arg(formatMs(m_session->eagerMs));
    m_sessionLabel->setText(status);
    m_sessionLabel->setToolTip(status);
}

bool MainWindow::eventFilter(QObject *o, QEvent *e)
{
    // On a narrow outline the parameters matter more than "% of floor", which the tooltip and
    // the Metrics tab still show.
    if (o == m_outline->viewport() && e->type() == QEvent::Resize)
        m_outline->setColumnHidden(OutlineModel::FloorColumn, m_outline->viewport()->width() < kOutlineFloorWidth);
    return QMainWindow::eventFilter(o, e);
}

void MainWindow::fitToScreen()
{
    const QScreen *s = screen() ? screen() : QGuiApplication::primaryScreen();
    if (!s)
        return;
    // Room for the frame a window manager adds around the window.
    const QRect free = s->availableGeometry().adjusted(8, 8, -8, -40);
    const QSize size = QSize(1500, 950).boundedTo(free.size()).expandedTo(minimumSizeHint().boundedTo(free.size()));
    resize(size);
    move(free.center() - QPoint(size.width() / 2, size.height() / 2));
}

void MainWindow::resetLayout()
{
    restoreState(m_defaultState, Settings::kWindowStateVersion);
    for (QDockWidget *d : findChildren<QDockWidget *>()) {
        d->setFloating(false);
        d->show();
    }
    if (!isMaximized() && !isFullScreen() && screen() && !screen()->availableGeometry().contains(frameGeometry()))
        fitToScreen();
    applyDefaultDockSizes();
}

void MainWindow::applyDefaultDockSizes()
{
    // The docks' shares of the window, as on a first start.
    const int w = std::max(width(), 800);
    resizeDocks({findChild<QDockWidget *>(QStringLiteral("outlineDock")),
                 findChild<QDockWidget *>(QStringLiteral("searchDock"))},
                {std::clamp(w * 30 / 100, 280, 520), std::clamp(w * 22 / 100, 280, 360)}, Qt::Horizontal);
    resizeDocks({findChild<QDockWidget *>(QStringLiteral("logDock"))}, {std::clamp(height() / 8, 60, 110)},
                Qt::Vertical);
}

void MainWindow::syncGraphExpansion()
{
    m_graphSyncPending = false;
    QSet<qint64> expanded = m_graph->expandedNodes(); // nodes the outline's filter hides keep theirs
    std::function<void(const QModelIndex &)> walk = [&](const QModelIndex &parent) {
        for (int r = 0; r < m_filter->rowCount(parent); ++r) {
            const QModelIndex i = m_filter->index(r, 0, parent);
            if (m_filter->rowCount(i) == 0)
                continue;
            const qint64 node = i.data(NodeIdRole).toLongLong();
            if (m_outline->isExpanded(i))
                expanded.insert(node);
            else
                expanded.remove(node);
            walk(i);
        }
    };
    walk({});
    m_graph->setExpandedNodes(expanded);
}

} // namespace kf::ui
