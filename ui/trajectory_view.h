#pragma once
// The trajectory table (round, best ms, % of reference, idea), as in the CRFM Conv2D table; a click
// on a row selects that round's fastest kernel. With Copy (tab-separated, for spreadsheets) and
// Export CSV (the same CSV as kernelforge-cli report --csv).
// The numbers take the width they need; the idea's title comes last and takes the rest, and at
// least kIdeaMinWidth, past which the table scrolls sideways rather than cutting titles to a few
// letters.
#include "model/session_snapshot.h"

#include <QWidget>

class QTableView;

namespace kf::ui {

class TrajectoryModel;

class TrajectoryView : public QWidget {
    Q_OBJECT
public:
    static constexpr int kIdeaMinWidth = 200;

    TrajectoryView(TrajectoryModel *model, QWidget *parent = nullptr);
    QTableView *view() const { return m_view; }

public slots:
    void copy();
    void exportCsv();
    bool writeCsv(const QString &file, QString *error = nullptr) const;

signals:
    void nodeActivated(std::int64_t node);
    void message(const QString &text, bool error);

protected:
    bool eventFilter(QObject *, QEvent *) override;

private:
    void fitIdeaColumn();

    TrajectoryModel *m_model;
    QTableView *m_view;
};

} // namespace kf::ui
