#pragma once
// The trajectory table of a session (core/search/trajectory.h): one row per round with the best
// time so far, its percentage of the reference and the idea that produced it. Numeric columns
// hold numbers in Qt::DisplayRole, so the chart can map them directly; views format them. A
// row's NodeIdRole is the round's own fastest correct kernel, else the best so far.
#include "model/session_snapshot.h"

#include <QAbstractTableModel>

namespace kf::ui {

class TrajectoryModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column {
        RoundColumn,
        BestMsColumn,
        PercentColumn,
        SpeedupColumn,
        IdeaColumn,
        RoundBestColumn,
        CandidatesColumn,
        CorrectColumn,
        ColumnCount
    };
    explicit TrajectoryModel(QObject *parent = nullptr);

    void setSnapshot(SnapshotPtr);
    const SnapshotPtr &snapshot() const { return m_snapshot; }
    // Rows as tab-separated text with a header line, for the clipboard.
    QString toTsv() const;

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation, int role = Qt::DisplayRole) const override;

private:
    void findRoundBests();

    SnapshotPtr m_snapshot;
    int m_rows = 0;
    std::vector<std::int64_t> m_roundBest; // per row: the round's fastest correct candidate, 0 if none
};

} // namespace kf::ui
