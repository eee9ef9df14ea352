#pragma once
// The problem browser: the problems (shipped and added folders), and for the selected one its
// reference source (read-only, highlighted), tensors with shapes, FLOPs, bytes and the roofline
// floor at each precision on a GPU of the datasheet table, beside the floors the open session
// measured for it. With no problem found, it says where it looked and offers Add folder….
#include "model/problem_model.h"

#include <QWidget>

class QComboBox;
class QLabel;
class QStackedWidget;
class QSortFilterProxyModel;
class QTableView;
class QsciScintilla;

namespace kf::ui {

class ProblemPage : public QWidget {
    Q_OBJECT
public:
    explicit ProblemPage(QWidget *parent = nullptr);

    void setProblems(const ProblemListPtr &);
    void setLocalGpu(const QString &name); // picks the floor's GPU when it is in the table
    // The open session's measured floors (sessionFloorsText), shown with its problem's datasheet floors.
    void setSessionFloors(const QString &problem, const QString &text);
    bool showsEmptyState() const;
    QString floorText() const;
    const Problem *currentProblem() const;
    bool selectProblem(const QString &name);
    QTableView *view() const { return m_view; }
    QString referenceText() const;

signals:
    void newSessionRequested(const QString &problem);
    void addFolderRequested();

private:
    void showCurrent();

    ProblemModel *m_model;
    QSortFilterProxyModel *m_proxy;
    QTableView *m_view;
    QLabel *m_title, *m_details, *m_floor, *m_errors, *m_empty;
    QStackedWidget *m_listPages;
    QString m_sessionProblem, m_sessionFloors;
    QComboBox *m_gpu;
    QsciScintilla *m_reference;
};

} // namespace kf::ui
