// The main window's actions, menus and shortcuts, and the handlers that ask for files.
#include "main_window.h"

#include "candidate_pane.h"
#include "cuda_editor.h"
#include "graph_view.h"
#include "help.h"
#include "message_bar.h"
#include "model/format.h"
#include "problem_page.h"
#include "round_chart.h"
#include "search_panel.h"
#include "settings.h"
#include "trajectory_view.h"

#include <QAction>
#include <QApplication>
#include <QCoreApplication>
#include <QDir>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QMenuBar>
#include <QTabWidget>
#include <QToolBar>
#include <QTreeView>

namespace kf::ui {

QAction *MainWindow::action(const QString &name) const { return findChild<QAction *>(name); }

void MainWindow::buildActions()
{
    auto make = [this](const QString &name, const QString &text, const QKeySequence &key, auto slot) {
        auto *a = new QAction(text, this);
        a->setObjectName(name);
        if (!key.isEmpty())
            a->setShortcut(key);
        connect(a, &QAction::triggered, this, slot);
        return a;
    };
    make(QStringLiteral("actionNew"), tr("&New session…"), QKeySequence::New, [this] { onNew(); });
    make(QStringLiteral("actionOpen"), tr("&Open session…"), QKeySequence::Open, [this] { onOpen(); });
    // Spelled out: the platform's standard keys for these are empty on some desktops.
    make(QStringLiteral("actionSaveAs"), tr("Save session &as…"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_S),
         [this] { onSaveAs(); });
    make(QStringLiteral("actionClose"), tr("&Close session"), QKeySequence(Qt::CTRL | Qt::Key_W), [this] {
        if (confirmDropEdits(tr("Closing the session")))
            closeSession();
    });
    make(QStringLiteral("actionQuit"), tr("&Quit"), QKeySequence(Qt::CTRL | Qt::Key_Q), [this] { close(); });
    make(QStringLiteral("actionSaveSource"), tr("&Save edited source as .cu…"), QKeySequence(Qt::CTRL | Qt::Key_S),
         [this] { onSaveSource(); });
    make(QStringLiteral("actionStart"), tr("&Start search"), QKeySequence(Qt::Key_F5), [this] { onStart(); });
    make(QStringLiteral("actionCancel"), tr("&Cancel search"), QKeySequence(Qt::SHIFT | Qt::Key_F5),
         [this] { m_engine->cancel(); });
    make(QStringLiteral("actionCompile"), tr("Compile &check"), QKeySequence(Qt::CTRL | Qt::Key_B),
         [this] { m_candidate->compileCheck(); });
    make(QStringLiteral("actionRebenchmark"), tr("&Re-benchmark"), QKeySequence(Qt::CTRL | Qt::Key_R),
         [this] { m_candidate->rebenchmark(); });
    make(QStringLiteral("actionRevert"), tr("Re&vert edits"), QKeySequence(), [this] { m_candidate->revert(); });
    make(QStringLiteral("actionPin"), tr("&Pin as baseline"), QKeySequence(Qt::CTRL | Qt::Key_P), [this] {
        if (m_selected)
            m_candidate->setPinned(m_candidate->pinned() == m_selected ? 0 : m_selected);
    });
    make(QStringLiteral("actionProfile"), tr("Pro&file with Nsight Compute"),
         QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_P), [this] { m_engine->profile(m_selected); });
    make(QStringLiteral("actionSelectBest"), tr("Select the &best kernel"), QKeySequence(Qt::CTRL | Qt::Key_G), [this] {
        if (m_session)
            selectNode(m_session->bestNode);
    });
    make(QStringLiteral("actionExportSelected"), tr("&Export selected kernel…"), QKeySequence(Qt::CTRL | Qt::Key_E),
         [this] { onExportSelected(); });
    make(QStringLiteral("actionExportBest"), tr("Export the &best kernel…"),
         QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_E), [this] { onExportBest(); });
    make(QStringLiteral("actionExportBank"), tr("Export the &bank to a folder…"), QKeySequence(),
         [this] { onExportBank(); });
    make(QStringLiteral("actionSaveChart"), tr("Save &chart as PNG…"), QKeySequence(), [this] { onSaveChart(); });
    make(QStringLiteral("actionCopyTrajectory"), tr("Copy &trajectory"), QKeySequence(),
         [this] { m_trajectoryView->copy(); });
    make(QStringLiteral("actionExportCsv"), tr("Export trajectory &CSV…"), QKeySequence(),
         [this] { m_trajectoryView->exportCsv(); });
    make(QStringLiteral("actionImportCompile"), tr("Import &torch.compile time…"), QKeySequence(),
         [this] { onImportCompileTime(); });
    make(QStringLiteral("actionAddFolder"), tr("Add problem &folder…"), QKeySequence(),
         [this] { onAddProblemFolder(); });
    make(QStringLiteral("actionFocusOutline"), tr("Search &tree"), QKeySequence(Qt::CTRL | Qt::Key_1),
         [this] { m_outline->setFocus(); });
    make(QStringLiteral("actionShowGraph"), tr("&Graph"), QKeySequence(Qt::CTRL | Qt::Key_2),
         [this] { showView(GraphTab); });
    make(QStringLiteral("actionShowChart"), tr("&Chart"), QKeySequence(Qt::CTRL | Qt::Key_3),
         [this] { showView(ChartTab); });
    make(QStringLiteral("actionShowTrajectory"), tr("&Trajectory"), QKeySequence(Qt::CTRL | Qt::Key_4),
         [this] { showView(TrajectoryTab); });
    make(QStringLiteral("actionShowProblems"), tr("&Problems"), QKeySequence(Qt::CTRL | Qt::Key_5),
         [this] { showView(ProblemsTab); });
    make(QStringLiteral("actionShowSource"), tr("&Source"), QKeySequence(Qt::CTRL | Qt::Key_6), [this] {
        m_candidate->tabs()->setCurrentIndex(CandidatePane::SourceTab);
        m_candidate->editor()->setFocus();
    });
    make(QStringLiteral("actionZoomIn"), tr("Zoom &in"), QKeySequence::ZoomIn, [this] { m_graph->zoomIn(); });
    make(QStringLiteral("actionZoomOut"), tr("Zoom &out"), QKeySequence::ZoomOut, [this] { m_graph->zoomOut(); });
    make(QStringLiteral("actionZoomFit"), tr("&Fit graph"), QKeySequence(Qt::CTRL | Qt::Key_0),
         [this] { m_graph->fit(); });
    make(QStringLiteral("actionResetLayout"), tr("&Reset layout"), QKeySequence(), [this] { resetLayout(); });
    make(QStringLiteral("actionDocs"), tr("&Documentation"), QKeySequence::HelpContents,
         [this] { openDocumentation(QStringLiteral("README.md")); });
    make(QStringLiteral("actionGuide"), tr("The &workbench"), QKeySequence(),
         [this] { openDocumentation(QStringLiteral("gui.md")); });
    make(QStringLiteral("actionShortcuts"), tr("&Keyboard shortcuts"), QKeySequence(), [this] {
        showHelpDialog(m_shortcuts, QStringLiteral("shortcutsDialog"), tr("Keyboard shortcuts"),
                       shortcutsText(findChildren<QAction *>(Qt::FindDirectChildrenOnly)));
    });
    make(QStringLiteral("actionAbout"), tr("&About KernelForge"), QKeySequence(), [this] {
        showHelpDialog(m_about, QStringLiteral("aboutDialog"), tr("About KernelForge"), aboutText(m_engine->gpu()));
    });
    make(QStringLiteral("actionAboutQt"), tr("About &Qt"), QKeySequence(), [] { QApplication::aboutQt(); });
}

void MainWindow::buildMenus()
{
    QMenu *file = menuBar()->addMenu(tr("&File"));
    file->addAction(action(QStringLiteral("actionNew")));
    file->addAction(action(QStringLiteral("actionOpen")));
    m_recentMenu = file->addMenu(tr("Open &recent"));
    m_examplesMenu = file->addMenu(tr("Open e&xample"));
    file->addAction(action(QStringLiteral("actionSaveAs")));
    file->addAction(action(QStringLiteral("actionSaveSource")));
    file->addAction(action(QStringLiteral("actionClose")));
    file->addSeparator();
    file->addAction(action(QStringLiteral("actionExportSelected")));
    file->addAction(action(QStringLiteral("actionExportBest")));
    file->addAction(action(QStringLiteral("actionExportBank")));
    file->addAction(action(QStringLiteral("actionSaveChart")));
    file->addAction(action(QStringLiteral("actionExportCsv")));
    file->addAction(action(QStringLiteral("actionImportCompile")));
    file->addSeparator();
    file->addAction(action(QStringLiteral("actionAddFolder")));
    file->addSeparator();
    file->addAction(action(QStringLiteral("actionQuit")));

    QMenu *search = menuBar()->addMenu(tr("&Search"));
    for (const char *n : {"actionStart", "actionCancel"})
        search->addAction(action(QLatin1String(n)));
    QMenu *kernel = menuBar()->addMenu(tr("&Kernel"));
    for (const char *n : {"actionCompile", "actionRebenchmark", "actionRevert", "actionSaveSource", "actionPin",
                          "actionProfile", "actionSelectBest"})
        kernel->addAction(action(QLatin1String(n)));
    QMenu *view = menuBar()->addMenu(tr("&View"));
    for (const char *n : {"actionFocusOutline", "actionShowGraph", "actionShowChart", "actionShowTrajectory",
                          "actionShowProblems", "actionShowSource"})
        view->addAction(action(QLatin1String(n)));
    view->addSeparator();
    for (const char *n : {"actionZoomIn", "actionZoomOut", "actionZoomFit", "actionCopyTrajectory"})
        view->addAction(action(QLatin1String(n)));
    view->addSeparator();
    for (QDockWidget *d : findChildren<QDockWidget *>())
        view->addAction(d->toggleViewAction());
    view->addSeparator();
    view->addAction(action(QStringLiteral("actionResetLayout")));
    QMenu *help = menuBar()->addMenu(tr("&Help"));
    for (const char *n : {"actionDocs", "actionGuide", "actionShortcuts"})
        help->addAction(action(QLatin1String(n)));
    help->addSeparator();
    for (const char *n : {"actionAbout", "actionAboutQt"})
        help->addAction(action(QLatin1String(n)));

    QToolBar *bar = addToolBar(tr("Main"));
    bar->setObjectName(QStringLiteral("mainToolBar"));
    bar->setToolButtonStyle(Qt::ToolButtonTextOnly);
    for (const char *n : {"actionNew", "actionOpen", "actionSaveAs"})
        bar->addAction(action(QLatin1String(n)));
    bar->addSeparator();
    for (const char *n : {"actionStart", "actionCancel"})
        bar->addAction(action(QLatin1String(n)));
    bar->addSeparator();
    for (const char *n : {"actionCompile", "actionRebenchmark", "actionSelectBest", "actionExportBest"})
        bar->addAction(action(QLatin1String(n)));

    connect(m_settings, &Settings::recentFilesChanged, this, &MainWindow::updateRecentMenu);
    updateRecentMenu();
    for (const QString &dir : exampleFolders())
        for (const QFileInfo &f : QDir(dir).entryInfoList({QStringLiteral("*.kfsession")}, QDir::Files, QDir::Name))
            m_examplesMenu->addAction(f.completeBaseName(), this,
                                      [this, path = f.absoluteFilePath()] { openSession(path); });
    if (m_examplesMenu->isEmpty())
        m_examplesMenu->addAction(tr("(no example sessions installed)"))->setEnabled(false);
}

void MainWindow::updateRecentMenu()
{
    m_recentMenu->clear();
    for (const QString &path : m_settings->recentFiles())
        m_recentMenu->addAction(path, this, [this, path] { openSession(path); });
    m_recentMenu->setEnabled(!m_recentMenu->isEmpty());
}

void MainWindow::updateActions()
{
    const bool session = bool(m_session);
    const NodeView *n = session ? m_session->node(m_selected) : nullptr;
    const bool candidate = n && n->isCandidate();
    const QString blocked = startBlockedReason();
    const bool searching = m_engine->searching();
    m_search->setStartBlocked(searching ? QString() : startBlockedReason(false));
    action(QStringLiteral("actionStart"))->setEnabled(blocked.isEmpty() && !searching && !m_engine->gpuBusy());
    action(QStringLiteral("actionStart"))
        ->setToolTip(blocked.isEmpty() ? tr("Start the search (F5)") : tr("Start is unavailable: %1").arg(blocked));
    action(QStringLiteral("actionCancel"))->setEnabled(searching || m_engine->gpuBusy());
    action(QStringLiteral("actionSaveAs"))->setEnabled(session && !searching);
    action(QStringLiteral("actionClose"))->setEnabled(session && !searching);
    action(QStringLiteral("actionNew"))->setEnabled(!searching);
    action(QStringLiteral("actionOpen"))->setEnabled(!searching);
    for (const char *a : {"actionCompile", "actionPin", "actionExportSelected", "actionRevert", "actionSaveSource"})
        action(QLatin1String(a))->setEnabled(candidate);
    const GpuStatus &g = m_engine->gpu();
    const bool canRun = candidate && g.present && session && !m_session->readOnly && !m_engine->gpuBusy();
    action(QStringLiteral("actionRebenchmark"))->setEnabled(canRun);
    static const bool ncu = !findCudaTool(QStringLiteral("ncu")).isEmpty(); // looked up once
    action(QStringLiteral("actionProfile"))->setEnabled(candidate && g.present && !m_engine->gpuBusy() && ncu);
    for (const char *a : {"actionExportBest", "actionExportBank", "actionSelectBest"})
        action(QLatin1String(a))->setEnabled(session && m_session->bestNode != 0);
    for (const char *a : {"actionSaveChart", "actionExportCsv", "actionCopyTrajectory"})
        action(QLatin1String(a))->setEnabled(session);
    action(QStringLiteral("actionImportCompile"))->setEnabled(session && !m_session->readOnly);
    if (g.checked)
        m_candidate->setGpuUnavailable(g.present ? QString() : tr("it needs an NVIDIA GPU (%1)").arg(g.reason));
}

QString MainWindow::askSaveFile(const QString &title, const QString &filter, const QString &suggested)
{
    const QString file =
        QFileDialog::getSaveFileName(this, title, QDir(m_settings->lastFolder()).filePath(suggested), filter);
    if (!file.isEmpty())
        m_settings->setLastFolder(QFileInfo(file).absolutePath());
    return file;
}

void MainWindow::openSession(const QString &path)
{
    if (!confirmDropEdits(tr("Opening %1").arg(QFileInfo(path).fileName())))
        return;
    const QFileInfo f(path);
    const bool writable = f.isWritable() && QFileInfo(f.absolutePath()).isWritable() && !isShippedExample(path);
    m_engine->openSession(f.absoluteFilePath(), writable);
}

void MainWindow::newSession(const QString &problem, const QString &file)
{
    if (!m_problems->selectProblem(problem) || !m_problems->currentProblem()) {
        showError(tr("New session"), tr("there is no problem called %1").arg(problem));
        return;
    }
    m_engine->createSession(file, *m_problems->currentProblem(), m_search->settings(), m_search->generator());
}

void MainWindow::saveSessionAs(const QString &file)
{
    // The copy has the same nodes: the editor's unsaved edits stay with them.
    m_candidate->keepDraftsFor(QFileInfo(file).absoluteFilePath().toStdString());
    m_engine->saveSessionAs(QFileInfo(file).absoluteFilePath());
}

QString MainWindow::exportNote(std::int64_t node) const
{
    QStringList notes;
    if (m_candidate->draftNodes().contains(node))
        notes << tr("It holds the stored kernel, not the editor's unsaved edits (Save edited source as .cu keeps "
                    "those; Re-benchmark records them)");
    if (const NodeView *n = m_session ? m_session->node(node) : nullptr)
        if (const std::string warning = exportWarning(*n); !warning.empty())
            notes << tr("Its header warns: %1").arg(qs(warning));
    return notes.join(QStringLiteral(". "));
}

void MainWindow::exportSelected(const QString &file)
{
    m_engine->exportCandidate(m_selected, file, exportNote(m_selected));
}

void MainWindow::exportBest(const QString &file)
{
    if (m_session && m_session->bestNode)
        m_engine->exportCandidate(m_session->bestNode, file, exportNote(m_session->bestNode));
}

void MainWindow::exportBank(const QString &folder) { m_engine->exportBank(folder); }

bool MainWindow::saveChart(const QString &file)
{
    QString error;
    if (m_chart->savePng(file, &error)) {
        showInfo(tr("Saved the chart as %1").arg(file));
        return true;
    }
    showError(tr("Save chart"), error);
    return false;
}

void MainWindow::onNew()
{
    if (!confirmDropEdits(tr("Creating a new session")))
        return;
    const Problem *p = m_problems->currentProblem();
    if (!p) {
        showView(ProblemsTab);
        showError(tr("New session"), tr("select a problem first"));
        return;
    }
    const QString file = QFileDialog::getSaveFileName(
        this, tr("New session for %1").arg(qs(p->name)),
        QDir(m_settings->lastFolder()).filePath(qs(p->name) + QStringLiteral(".kfsession")),
        tr("KernelForge sessions (*.kfsession)"), nullptr, QFileDialog::DontConfirmOverwrite);
    if (file.isEmpty())
        return;
    m_settings->setLastFolder(QFileInfo(file).absolutePath());
    // An existing file is never overwritten: the engine says so and nothing is lost.
    newSession(qs(p->name), file);
}

void MainWindow::onOpen()
{
    const QString file = QFileDialog::getOpenFileName(this, tr("Open session"), m_settings->lastFolder(),
                                                      tr("KernelForge sessions (*.kfsession);;All files (*)"));
    if (file.isEmpty())
        return;
    m_settings->setLastFolder(QFileInfo(file).absolutePath());
    openSession(file);
}

void MainWindow::onSaveAs()
{
    if (!m_session)
        return;
    const QString file = askSaveFile(tr("Save session as"), tr("KernelForge sessions (*.kfsession)"),
                                     QFileInfo(qs(m_session->path)).fileName());
    if (!file.isEmpty())
        saveSessionAs(file);
}

void MainWindow::onExportSelected()
{
    const NodeView *n = m_session ? m_session->node(m_selected) : nullptr;
    if (!n || !n->isCandidate())
        return;
    // The export is of the kernel as stored; the title says so when the editor holds edits of it.
    const QString title = m_candidate->draftNodes().contains(n->id())
        ? tr("Export the stored kernel #%1 (without the editor's unsaved edits)").arg(n->id())
        : tr("Export kernel #%1").arg(n->id());
    const QString file = askSaveFile(title, tr("CUDA sources (*.cu)"),
                                     QStringLiteral("%1_node%2.cu").arg(qs(m_session->meta.problemName)).arg(n->id()));
    if (!file.isEmpty())
        exportSelected(file);
}

void MainWindow::onExportBest()
{
    if (!m_session || !m_session->bestNode)
        return;
    const QString file = askSaveFile(tr("Export the best kernel"), tr("CUDA sources (*.cu)"),
                                     QStringLiteral("%1_best.cu").arg(qs(m_session->meta.problemName)));
    if (!file.isEmpty())
        exportBest(file);
}

void MainWindow::onExportBank()
{
    if (!m_session)
        return;
    const QString folder =
        QFileDialog::getExistingDirectory(this, tr("Export the bank to a folder"), m_settings->lastFolder());
    if (!folder.isEmpty())
        exportBank(folder);
}

void MainWindow::onSaveChart()
{
    const QString file = askSaveFile(
        tr("Save chart"), tr("PNG images (*.png)"),
        QStringLiteral("%1_chart.png").arg(m_session ? qs(m_session->meta.problemName) : QStringLiteral("session")));
    if (!file.isEmpty())
        saveChart(file);
}

void MainWindow::onAddProblemFolder()
{
    const QString folder =
        QFileDialog::getExistingDirectory(this, tr("Add a folder of problem files"), m_settings->lastFolder());
    if (folder.isEmpty())
        return;
    QStringList folders = m_settings->problemFolders();
    if (!folders.contains(folder))
        folders << folder;
    m_settings->setProblemFolders(folders);
    m_engine->listProblems(folders);
}

void MainWindow::onImportCompileTime()
{
    const QString file =
        QFileDialog::getOpenFileName(this, tr("torch.compile time (tools/compile-baseline.py --json)"),
                                     m_settings->lastFolder(), tr("JSON files (*.json);;All files (*)"));
    if (!file.isEmpty())
        m_engine->importCompileTime(file);
}

void MainWindow::onStart()
{
    const QString blocked = startBlockedReason();
    if (!blocked.isEmpty()) {
        showError(tr("Start"), blocked);
        return;
    }
    const SearchSettings s = m_search->settings();
    if (Status ok = s.validate(); !ok) {
        showError(tr("Search settings"), qs(ok.error().text()));
        return;
    }
    m_settings->setSearchSettings(s);
    m_settings->setGenerator(m_search->generator());
    for (const GeneratorChoice &c : m_search->generatorChoices())
        m_settings->setGeneratorChoice(c);
    m_engine->startSearch(s, m_search->generatorChoice());
}

} // namespace kf::ui
