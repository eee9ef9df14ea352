#pragma once
// The workbench window. Views: the outline (left), graph / chart / trajectory / problems (centre
// top), the candidate pane (centre bottom), search settings (right), log console (bottom). One
// selection is shared: selecting a node anywhere selects it everywhere; the outline and the graph
// expand the same nodes. The first size fits the screen, docks scroll rather than clip, and
// View ▸ Reset layout brings the layout back. Unsaved editor text is never dropped without asking.
#include "data_folders.h"
#include "engine.h"

#include <QMainWindow>
#include <QPointer>

class QAction;
class QComboBox;
class QDialog;
class QLabel;
class QLineEdit;
class QMenu;
class QPlainTextEdit;
class QSplitter;
class QTabWidget;
class QTreeView;

namespace kf::ui {

class CandidatePane;
class GraphView;
class MessageBar;
class OutlineFilter;
class OutlineModel;
class PointsModel;
class ProblemPage;
class RoundChart;
class SearchPanel;
class Settings;
class TrajectoryModel;
class TrajectoryView;

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    enum View { GraphTab, ChartTab, TrajectoryTab, ProblemsTab };

    MainWindow(Settings *settings, Engine *engine, QWidget *parent = nullptr);
    ~MainWindow() override;

    // The node selected in every view (0: none).
    std::int64_t selectedNode() const { return m_selected; }
    void selectNode(std::int64_t node);
    // Asks first when the editor holds unsaved edits (confirmDropEdits).
    void openSession(const QString &path);
    void showView(View);
    // The first size: what the window wants, within the screen's free area, centred on it.
    void fitToScreen();
    void resetLayout();
    // Makes the graph expand what the outline expands (it also follows each change by itself).
    void syncGraphExpansion();

    // For tests and screenshots.
    Engine *engine() const { return m_engine; }
    QTreeView *outline() const { return m_outline; }
    OutlineModel *outlineModel() const { return m_outlineModel; }
    OutlineFilter *outlineFilter() const { return m_filter; }
    GraphView *graph() const { return m_graph; }
    RoundChart *chart() const { return m_chart; }
    TrajectoryView *trajectory() const { return m_trajectoryView; }
    TrajectoryModel *trajectoryModel() const { return m_trajectoryModel; }
    PointsModel *pointsModel() const { return m_points; }
    CandidatePane *candidate() const { return m_candidate; }
    ProblemPage *problems() const { return m_problems; }
    SearchPanel *searchPanel() const { return m_search; }
    MessageBar *messageBar() const { return m_message; }
    MessageBar *gpuBanner() const { return m_gpuBanner; }
    QPlainTextEdit *console() const { return m_console; }
    QTabWidget *views() const { return m_views; }
    QAction *action(const QString &name) const; // by objectName
    QLabel *sessionLabel() const { return m_sessionLabel; }
    QDialog *aboutDialog() const { return m_about; }
    QDialog *shortcutsDialog() const { return m_shortcuts; }

    // Actions with a file chosen by the caller (the menu asks with a dialog).
    void exportSelected(const QString &file);
    void exportBest(const QString &file);
    void exportBank(const QString &folder);
    bool saveChart(const QString &file);
    void saveSessionAs(const QString &file);
    void newSession(const QString &problem, const QString &file);
    // Writes a candidate's source as the editor holds it (edits included) to `file`.
    bool saveSource(std::int64_t node, const QString &file);
    // Before something would drop the editor's unsaved edits: asks whether to save them as .cu
    // files, drop them or not go on. True to go on. `action` names it ("Closing the session").
    bool confirmDropEdits(const QString &action);

    // Below this width of the outline, its "% of floor" column is hidden.
    static constexpr int kOutlineFloorWidth = 560;

protected:
    void closeEvent(QCloseEvent *) override;
    bool eventFilter(QObject *, QEvent *) override;

private:
    void buildViews();
    QWidget *buildOutline(); // returns the pane of the outline and its filter row, for its dock
    void connectOutline();
    void buildViewTabs();
    void buildCentre();
    void buildDocks(QWidget *outlinePane);
    void connectSelection();
    void connectCandidatePane();
    void connectProblemPage();
    void connectSearchPanel();
    void buildActions();
    void buildMenus();
    void connectEngine();
    void setSession(const SnapshotPtr &, bool fresh);
    void updateActions();
    void updateTitle();
    void applyDefaultDockSizes();
    void updateRecentMenu();
    void showError(const QString &what, const QString &message);
    void showInfo(const QString &message);
    void log(const QString &line);
    // Why Start is unavailable ("" when it is); `withFields` adds the search panel's own check of
    // the generator's fields, which the panel shows beside them.
    QString startBlockedReason(bool withFields = true) const;
    QString askSaveFile(const QString &title, const QString &filter, const QString &suggested);
    // Menu handlers that ask for a file.
    void onNew();
    void onOpen();
    void onSaveAs();
    void onExportSelected();
    void onExportBest();
    void onExportBank();
    void onSaveChart();
    void onAddProblemFolder();
    void onImportCompileTime();
    void onStart();
    void onSaveSource();
    bool saveSourcesAsked(const QList<qint64> &nodes); // a file or a folder chosen in a dialog
    QString suggestedSourceName(std::int64_t node) const;
    void closeSession();
    void showHelpDialog(QDialog *&dialog, const QString &name, const QString &title, const QString &html);
    void openDocumentation(const QString &page);
    QString exportNote(std::int64_t node) const;

    Settings *m_settings;
    Engine *m_engine;
    SnapshotPtr m_session;
    std::int64_t m_selected = 0;
    std::int64_t m_selectAfterRefresh = 0; // a re-benchmarked node, selected once it is read
    bool m_selecting = false;
    QString m_openingPath;
    std::int64_t m_rebenchParent = 0; // the candidate whose edit is being re-benchmarked
    bool m_graphSyncPending = false;
    QByteArray m_defaultState; // the docks and tool bar as built, for Reset layout

    MessageBar *m_message, *m_gpuBanner;
    QTreeView *m_outline;
    OutlineModel *m_outlineModel;
    OutlineFilter *m_filter;
    QComboBox *m_show;
    QLineEdit *m_find;
    GraphView *m_graph;
    TrajectoryModel *m_trajectoryModel;
    PointsModel *m_points;
    RoundChart *m_chart;
    TrajectoryView *m_trajectoryView;
    ProblemPage *m_problems;
    QTabWidget *m_views;
    QSplitter *m_split;
    CandidatePane *m_candidate;
    SearchPanel *m_search;
    QPlainTextEdit *m_console;
    QLabel *m_sessionLabel;
    QMenu *m_recentMenu = nullptr, *m_examplesMenu = nullptr;
    QDialog *m_about = nullptr, *m_shortcuts = nullptr;
};

} // namespace kf::ui
