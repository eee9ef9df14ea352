// The window on a laptop's 1366×768 screen (data/screen_1366x768.json): it opens within the
// screen with the log and the status bar in sight, every control of the search panel is in view
// or reachable by scrolling its dock (at the first size, after the window shrank to 1100 px and
// grew back, and with a language model's fields), View ▸ Reset layout brings the docks back, and
// the graph of a large session keeps its labels readable and expands what the outline expands.
#include "graph_view.h"
#include "gui_support.h"
#include "model/roles.h"
#include "search_panel.h"

#include <QAbstractButton>
#include <QAbstractSpinBox>
#include <QAction>
#include <QComboBox>
#include <QDockWidget>
#include <QGuiApplication>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QScreen>
#include <QScrollArea>
#include <QScrollBar>
#include <QSortFilterProxyModel>
#include <QStatusBar>
#include <QTreeView>

#include <functional>

using namespace kf;
using namespace kf::ui;
using namespace kf::ui::test;

class TestGuiLayout : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void fitsTheScreen();
    void searchPanelReachable_data();
    void searchPanelReachable();
    void resetLayout();
    void graphStaysReadable();
};

namespace {

// Whether `w` lies inside `area`'s viewport once the area scrolled to it, and that viewport lies
// inside the window: what a person can reach with the scroll bars.
bool reachable(QScrollArea *area, QWidget *w, QWidget *window, QString *why)
{
    // Scroll so that the whole widget shows (ensureWidgetVisible would settle for a spin box's
    // text cursor), as a person drags the scroll bars.
    const QRect inPanel(w->mapTo(area->widget(), QPoint(0, 0)), w->size());
    area->ensureVisible(inPanel.center().x(), inPanel.center().y(), inPanel.width() / 2 + 1, inPanel.height() / 2 + 1);
    QCoreApplication::processEvents();
    const QRect inViewport(w->mapTo(area->viewport(), QPoint(0, 0)), w->size());
    const QRect viewportInWindow(area->viewport()->mapTo(window, QPoint(0, 0)), area->viewport()->size());
    if (!area->viewport()->rect().contains(inViewport)) {
        *why = QStringLiteral("%1 (%2) at %3,%4 %5×%6 is cut by the dock's %7×%8 view")
                   .arg(w->objectName(), QString::fromLatin1(w->metaObject()->className()))
                   .arg(inViewport.x())
                   .arg(inViewport.y())
                   .arg(inViewport.width())
                   .arg(inViewport.height())
                   .arg(area->viewport()->width())
                   .arg(area->viewport()->height());
        return false;
    }
    if (!window->rect().contains(viewportInWindow)) {
        *why = QStringLiteral("the search dock's view is outside the window");
        return false;
    }
    return true;
}

QList<QWidget *> controls(SearchPanel *panel)
{
    QList<QWidget *> out;
    for (QWidget *w : panel->findChildren<QWidget *>())
        if (w->isVisibleTo(panel) &&
            (qobject_cast<QAbstractSpinBox *>(w) || qobject_cast<QComboBox *>(w) || qobject_cast<QLineEdit *>(w) ||
             qobject_cast<QAbstractButton *>(w)))
            out << w;
    return out;
}

} // namespace

void TestGuiLayout::initTestCase()
{
    if (QGuiApplication::primaryScreen()->size() != QSize(1366, 768))
        QSKIP("needs the 1366×768 screen of data/screen_1366x768.json (ctest -R test_gui_layout)");
}

void TestGuiLayout::fitsTheScreen()
{
    Workbench wb;
    MainWindow &w = *wb.window;
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    const QRect screen = w.screen()->availableGeometry();
    QVERIFY2(screen.contains(w.frameGeometry()),
             qPrintable(QStringLiteral("%1×%2 at %3,%4")
                            .arg(w.frameGeometry().width())
                            .arg(w.frameGeometry().height())
                            .arg(w.x())
                            .arg(w.y())));
    QVERIFY2(
        w.minimumSizeHint().width() <= 1100 && w.minimumSizeHint().height() <= 640,
        qPrintable(QStringLiteral("minimum %1×%2").arg(w.minimumSizeHint().width()).arg(w.minimumSizeHint().height())));
    // The log and the status bar are on screen.
    for (QWidget *part : {static_cast<QWidget *>(w.console()), static_cast<QWidget *>(w.statusBar())}) {
        QVERIFY(part->isVisible());
        const QRect global(part->mapToGlobal(QPoint(0, 0)), part->size());
        QVERIFY2(w.screen()->geometry().contains(global), part->metaObject()->className());
    }
    // A window saved on a larger screen comes back within this one.
    wb.settings->setWindow(QByteArray(), QByteArray());
    QVERIFY(wb.open(examplePath(QStringLiteral("softmax"))));
    w.resize(1800, 1100);
    w.close();
    Engine engine;
    MainWindow again(wb.settings.get(), &engine);
    again.show();
    QVERIFY(QTest::qWaitForWindowExposed(&again));
    QVERIFY(again.screen()->availableGeometry().contains(again.frameGeometry()));
}

void TestGuiLayout::searchPanelReachable_data()
{
    QTest::addColumn<QString>("generator");
    QTest::newRow("builtin") << QStringLiteral("builtin");
    QTest::newRow("openai") << QStringLiteral("openai");
}

void TestGuiLayout::searchPanelReachable()
{
    QFETCH(QString, generator);
    Workbench wb;
    MainWindow &w = *wb.window;
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    SearchPanel *panel = w.searchPanel();
    panel->setGenerator(generator);
    auto *area = w.findChild<QScrollArea *>(QStringLiteral("searchScroll"));
    QVERIFY(area && area->isVisible());
    const QSize first = w.size();
    // The first size, then after shrinking the window to 1100 px wide and growing it back.
    for (const QSize size : {first, QSize(1100, first.height()), first}) {
        w.resize(size);
        QCoreApplication::processEvents();
        const QList<QWidget *> all = controls(panel);
        QVERIFY(all.size() >= 14);
        for (QWidget *c : all) {
            QString why;
            QVERIFY2(reachable(area, c, &w, &why),
                     qPrintable(QStringLiteral("at %1×%2: %3").arg(size.width()).arg(size.height()).arg(why)));
        }
    }
}

void TestGuiLayout::resetLayout()
{
    Workbench wb;
    MainWindow &w = *wb.window;
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    auto *log = w.findChild<QDockWidget *>(QStringLiteral("logDock"));
    auto *search = w.findChild<QDockWidget *>(QStringLiteral("searchDock"));
    auto *outline = w.findChild<QDockWidget *>(QStringLiteral("outlineDock"));
    log->hide();
    search->setFloating(true);
    w.resizeDocks({outline}, {600}, Qt::Horizontal);
    QCoreApplication::processEvents();
    QVERIFY(!log->isVisible() && search->isFloating());
    w.action(QStringLiteral("actionResetLayout"))->trigger();
    QCoreApplication::processEvents();
    QVERIFY(log->isVisible());
    QVERIFY(!search->isFloating() && search->isVisible());
    QTRY_VERIFY(search->width() >= 250);
    QVERIFY(outline->width() <= 520);
    QVERIFY(w.screen()->availableGeometry().contains(w.frameGeometry()));
}

void TestGuiLayout::graphStaysReadable()
{
    Workbench wb;
    MainWindow &w = *wb.window;
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QVERIFY(wb.open(examplePath(QStringLiteral("layernorm")))); // 122 nodes
    QTRY_VERIFY(w.selectedNode() != 0);
    w.showView(MainWindow::GraphTab);
    GraphView *g = w.graph();
    QCoreApplication::processEvents();
    QVERIFY2(g->zoom() >= GraphView::kMinScale - 1e-9, qPrintable(QString::number(g->zoom())));
    // The root, 8 rounds, 24 ideas and the 4 candidates of the best kernel's idea: 37 of 122.
    QCOMPARE(g->nodeCount(), 37);
    QVERIFY(g->isShown(w.selectedNode())); // the best kernel, opened at
    // The outline and the graph expand the same nodes.
    QTreeView *tree = w.outline();
    auto agree = [&] {
        std::function<bool(const QModelIndex &)> walk = [&](const QModelIndex &parent) {
            for (int r = 0; r < tree->model()->rowCount(parent); ++r) {
                const QModelIndex i = tree->model()->index(r, 0, parent);
                if (tree->model()->rowCount(i) > 0 &&
                    tree->isExpanded(i) != g->isExpanded(i.data(NodeIdRole).toLongLong()))
                    return false;
                if (!walk(i))
                    return false;
            }
            return true;
        };
        return walk({});
    };
    QTRY_VERIFY(agree());
    // Collapse a round in the outline: the graph hides its ideas.
    const QModelIndex round = tree->model()->index(2, 0);
    const std::int64_t roundNode = round.data(NodeIdRole).toLongLong();
    const std::int64_t idea = tree->model()->index(0, 0, round).data(NodeIdRole).toLongLong();
    tree->expand(round);
    QTRY_VERIFY(g->isShown(idea));
    tree->collapse(round);
    QTRY_VERIFY(!g->isShown(idea));
    QVERIFY(agree());
    // Expand it again from the graph (a double click): the outline follows.
    g->fit();
    QCoreApplication::processEvents();
    QVERIFY(g->isShown(roundNode));
    const QPoint at = g->mapFromScene(g->nodePosition(roundNode) + QPointF(40, 10));
    QTest::mouseDClick(g->viewport(), Qt::LeftButton, {}, at);
    QTRY_VERIFY(tree->isExpanded(round));
    QTRY_VERIFY(g->isShown(idea));
    QVERIFY(agree());
}

QTEST_MAIN(TestGuiLayout)
#include "test_gui_layout.moc"
