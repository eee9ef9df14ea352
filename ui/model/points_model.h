#pragma once
// Every timed candidate as a point of the per-round chart: its round (spread a little so that the
// candidates of one round do not hide each other), its speedup, and what the tooltip names.
#include "model/session_snapshot.h"

#include <QAbstractTableModel>

#include <vector>

namespace kf::ui {

class PointsModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { XColumn, SpeedupColumn, RoundColumn, NodeColumn, NameColumn, TimeColumn, ColumnCount };
    explicit PointsModel(QObject *parent = nullptr);

    void setSnapshot(SnapshotPtr);
    int rowOfNode(std::int64_t node) const; // -1 when the node is not a point
    std::int64_t nodeAt(int row) const;

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation, int role = Qt::DisplayRole) const override;

private:
    struct Point {
        double x = 0, speedup = 0, ms = 0;
        int round = 0;
        std::int64_t node = 0;
        QString name;
    };
    std::vector<Point> m_points;
};

} // namespace kf::ui
