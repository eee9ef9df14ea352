#include "main_window.h"

#include "candidate_pane.h"
#include "gen/factory.h"
#include "graph_view.h"
#include "message_bar.h"
#include "model/format.h"
#include "model/outline_filter.h"
#include "model/outline_model.h"
#include "model/points_model.h"
#include "model/roles.h"
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
#include <QFontDatabase>
#include <QFileInfo>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QScrollArea>
#include <QSplitter>
#include <QStatusBar>
#include <QTabWidget>
#include <QTreeView>
#include <QVBoxLayout>

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

    resize(1500, 950);
    restoreGeometry(m_settings->windowGeometry());
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
    // Outline with its filter row.
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
    // Names are long ("Row split across a thread-block cluster ..."): the name column takes what
    // the numbers leave, and the tooltip and the candidate pane show the rest.
    m_outline->header()->setStretchLastSection(false);
    m_outline->header()->setSectionResizeMode(OutlineModel::NameColumn, QHeaderView::Stretch);
    for (int c = OutlineModel::StatusColumn; c < OutlineModel::ColumnCount; ++c)
        m_outline->header()->setSectionResizeMode(c, QHeaderView::ResizeToContents);
    m_outline->setColumnHidden(OutlineModel::StatusColumn, true); // the icon and the tooltip say it
    m_show = new QComboBox(this);
    m_show->setObjectName(QStringLiteral("statusFilter"));
    m_show->addItem(tr("All"), int(OutlineFilter::Show::All));
    m_show->addItem(tr("Correct"), int(OutlineFilter::Show::Correct));
    m_show->addItem(tr("Failed"), int(OutlineFilter::Show::Failed));
    m_show->addItem(tr("Queued"), int(OutlineFilter::Show::Pending));
    m_show->addItem(tr("Hand-edited"), int(OutlineFilter::Show::HandEdited));
    m_find = new QLineEdit(this);
    m_find->setPlaceholderText(tr("Find in names"));
    m_find->setClearButtonEnabled(true);
    auto *outlinePane = new QWidget(this);
    outlinePane->setMinimumWidth(420);
    auto *ol = new QVBoxLayout(outlinePane);
    ol->setContentsMargins(2, 2, 2, 2);
    auto *filterRow = new QHBoxLayout;
    filterRow->addWidget(m_show);
    filterRow->addWidget(m_find, 1);
    ol->addLayout(filterRow);
    ol->addWidget(m_outline, 1);
    // Rounds that appear while a search runs open by themselves; what the user expanded or
    // collapsed stays so (expandToDepth would reset it).
    connect(m_filter, &QAbstractItemModel::rowsInserted, this, [this](const QModelIndex &parent, int first, int last) {
        if (!parent.isValid())
            for (int r = first; r <= last; ++r)
                m_outline->expand(m_filter->index(r, 0));
    });
    connect(m_show, &QComboBox::currentIndexChanged, this, [this] {
        m_filter->setShow(OutlineFilter::Show(m_show->currentData().toInt()));
        m_outline->expandAll();
    });
    connect(m_find, &QLineEdit::textChanged, this, [this](const QString &t) {
        m_filter->setText(t);
        m_outline->expandAll();
    });

    m_graph = new GraphView(this);
    m_graph->setObjectName(QStringLiteral("graph"));
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
    auto *central = new QWidget(this);
    auto *cl = new QVBoxLayout(central);
    cl->setContentsMargins(4, 4, 4, 0);
    cl->addWidget(m_gpuBanner);
    cl->addWidget(m_message);
    cl->addWidget(m_split, 1);
    setCentralWidget(central);

    auto dock = [this](const QString &title, const QString &name, QWidget *w, Qt::DockWidgetArea area) {
        auto *d = new QDockWidget(title, this);
        d->setObjectName(name);
        d->setWidget(w);
        addDockWidget(area, d);
        return d;
    };
    dock(tr("Search tree"), QStringLiteral("outlineDock"), outlinePane, Qt::LeftDockWidgetArea);
    m_search = new SearchPanel(this);
    // With a language model's fields the panel can be taller than the window: it scrolls then.
    auto *searchScroll = new QScrollArea(this);
    searchScroll->setWidget(m_search);
    searchScroll->setWidgetResizable(true);
    searchScroll->setFrameShape(QFrame::NoFrame);
    searchScroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    dock(tr("Search"), QStringLiteral("searchDock"), searchScroll, Qt::RightDockWidgetArea);
    m_console = new QPlainTextEdit(this);
    m_console->setObjectName(QStringLiteral("console"));
    m_console->setReadOnly(true);
    m_console->setMaximumBlockCount(5000);
    m_console->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    dock(tr("Log"), QStringLiteral("logDock"), m_console, Qt::BottomDockWidgetArea);
    resizeDocks({findChild<QDockWidget *>(QStringLiteral("outlineDock"))}, {500}, Qt::Horizontal);
    resizeDocks({findChild<QDockWidget *>(QStringLiteral("logDock"))}, {110}, Qt::Vertical);

    // The shared selection.
    connect(m_outline->selectionModel(), &QItemSelectionModel::currentRowChanged, this, [this](const QModelIndex &i) {
        if (!m_selecting && i.isValid())
            selectNode(i.data(NodeIdRole).toLongLong());
    });
    connect(m_graph, &GraphView::nodeSelected, this, &MainWindow::selectNode);
    connect(m_chart, &RoundChart::nodeClicked, this, &MainWindow::selectNode);
    connect(m_trajectoryView, &TrajectoryView::nodeActivated, this, &MainWindow::selectNode);
    connect(m_trajectoryView, &TrajectoryView::message, this, [this](const QString &t, bool error) {
        error ? showError(tr("Export CSV"), t) : showInfo(t);
    });

    connect(m_candidate, &CandidatePane::compileRequested, m_engine, &Engine::compileCheck);
    connect(m_candidate, &CandidatePane::rebenchmarkRequested, this,
            [this](std::int64_t parent, const std::string &source, const QString &title) {
                log(tr("Re-benchmarking an edit of #%1…").arg(parent));
                m_engine->rebenchmark(parent, source, title);
            });
    connect(m_candidate, &CandidatePane::pinRequested, this, [this](std::int64_t node) {
        m_candidate->setPinned(node);
        if (node)
            showInfo(tr("Pinned #%1 as the baseline: the Metrics tab shows it beside the selected candidate").arg(node));
    });
    connect(m_candidate, &CandidatePane::exportRequested, this, [this] { onExportSelected(); });
    connect(m_candidate, &CandidatePane::profileRequested, m_engine, &Engine::profile);
    connect(m_candidate, &CandidatePane::exchangesRequested, m_engine, &Engine::loadExchanges);
    connect(m_problems, &ProblemPage::newSessionRequested, this, [this] { onNew(); });
    connect(m_problems, &ProblemPage::addFolderRequested, this, &MainWindow::onAddProblemFolder);
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
    connect(m_engine, &Engine::searchProgress, m_chart, [this](const SearchProgress &p) { m_chart->setLiveStatus(p.live); });
    connect(m_engine, &Engine::searchFinished, this, [this](const QString &reason, bool failed) {
        m_search->setRunning(false);
        m_search->showFinished(reason, failed);
        m_chart->setLiveStatus({});
        log(failed ? tr("Search failed: %1").arg(reason) : tr("Search stopped: %1").arg(reason));
        if (failed)
            showError(tr("Search"), reason);
        updateActions();
    });
    connect(m_engine, &Engine::rebenchmarked, this, [this](std::int64_t node, const QString &verdict) {
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
            m_split->setSizes({h * 2 / 5, h * 3 / 5});
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
    } else {
        const std::int64_t next = m_selectAfterRefresh && s->node(m_selectAfterRefresh) ? m_selectAfterRefresh : m_selected;
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
    m_message->showMessage(MessageBar::Kind::Error, QStringLiteral("<b>%1</b>: %2").arg(what.toHtmlEscaped(), message.toHtmlEscaped()));
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
        statusBar()->showMessage(tr("No session open"));
        return;
    }
    setWindowTitle(tr("%1 – %2 – KernelForge").arg(QFileInfo(qs(m_session->path)).fileName(), qs(m_session->meta.problemName)));
    QString status = qs(m_session->path);
    if (m_session->readOnly)
        status += tr("  (read-only)");
    if (!m_session->meta.gpuName.empty())
        status += tr("  · recorded on %1").arg(qs(m_session->meta.gpuName));
    if (m_session->eagerMs > 0)
        status += tr("  · eager %1").arg(formatMs(m_session->eagerMs));
    statusBar()->showMessage(status);
}

void MainWindow::closeEvent(QCloseEvent *e)
{
    // Every result is in the session file already; a running search is cancelled and keeps them.
    if (m_engine->searching())
        m_engine->cancel();
    m_settings->setWindow(saveGeometry(), saveState(Settings::kWindowStateVersion));
    m_settings->setSearchSettings(m_search->settings());
    m_settings->setGenerator(m_search->generator());
    for (const GeneratorChoice &c : m_search->generatorChoices())
        m_settings->setGeneratorChoice(c);
    e->accept();
}

} // namespace kf::ui
