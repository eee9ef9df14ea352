#include "model/points_model.h"

#include "model/format.h"
#include "model/roles.h"

#include <map>

namespace kf::ui {

PointsModel::PointsModel(QObject *parent) : QAbstractTableModel(parent) {}

void PointsModel::setSnapshot(SnapshotPtr s)
{
    std::vector<Point> points;
    std::map<int, int> perRound;
    if (s)
        for (const NodeView &n : s->nodes)
            if (n.isCandidate() && n.speedup > 0) {
                Point p;
                p.round = n.record.round;
                p.speedup = n.speedup;
                p.ms = n.medianMs;
                p.node = n.id();
                p.name = QStringLiteral("#%1 %2").arg(n.id()).arg(qs(n.record.title));
                if (n.sanitizerUnchecked)
                    p.name += QObject::tr(" (compute-sanitizer: unchecked)");
                points.push_back(p);
                ++perRound[p.round];
            }
    // Spread each round's points over ±0.3 around the round number, in creation order.
    std::map<int, int> seen;
    for (Point &p : points) {
        const int n = perRound[p.round], k = seen[p.round]++;
        p.x = p.round + (n > 1 ? 0.6 * (double(k) / (n - 1) - 0.5) : 0.0);
    }
    // Points are only added while a search runs; insert those rather than reset the chart.
    bool grows = points.size() >= m_points.size();
    for (std::size_t i = 0; grows && i < m_points.size(); ++i)
        grows = points[i].node == m_points[i].node;
    if (grows && !m_points.empty()) {
        const int before = int(m_points.size());
        if (int(points.size()) > before) {
            beginInsertRows({}, before, int(points.size()) - 1);
            m_points = std::move(points);
            endInsertRows();
        } else {
            m_points = std::move(points);
        }
        if (before > 0)
            emit dataChanged(index(0, 0), index(before - 1, ColumnCount - 1));
        return;
    }
    beginResetModel();
    m_points = std::move(points);
    endResetModel();
}

int PointsModel::rowOfNode(std::int64_t node) const
{
    for (std::size_t i = 0; i < m_points.size(); ++i)
        if (m_points[i].node == node)
            return int(i);
    return -1;
}

std::int64_t PointsModel::nodeAt(int row) const
{
    return row >= 0 && row < int(m_points.size()) ? m_points[std::size_t(row)].node : 0;
}

int PointsModel::rowCount(const QModelIndex &parent) const { return parent.isValid() ? 0 : int(m_points.size()); }
int PointsModel::columnCount(const QModelIndex &parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant PointsModel::data(const QModelIndex &index, int role) const
{
    if (!index.isValid() || index.row() >= int(m_points.size()))
        return {};
    const Point &p = m_points[std::size_t(index.row())];
    if (role == Qt::DisplayRole || role == SortRole) {
        switch (index.column()) {
        case XColumn:
            return p.x;
        case SpeedupColumn:
            return p.speedup;
        case RoundColumn:
            return p.round;
        case NodeColumn:
            return qint64(p.node);
        case NameColumn:
            return p.name;
        case TimeColumn:
            return p.ms;
        }
    } else if (role == NodeIdRole) {
        return qint64(p.node);
    } else if (role == Qt::ToolTipRole) {
        return QStringLiteral("%1\nround %2: %3, %4")
            .arg(p.name)
            .arg(p.round)
            .arg(formatMs(p.ms), formatSpeedup(p.speedup));
    }
    return {};
}

QVariant PointsModel::headerData(int section, Qt::Orientation o, int role) const
{
    if (o != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case XColumn:
        return tr("Position");
    case SpeedupColumn:
        return tr("Speedup");
    case RoundColumn:
        return tr("Round");
    case NodeColumn:
        return tr("Node");
    case NameColumn:
        return tr("Candidate");
    case TimeColumn:
        return tr("Time");
    }
    return {};
}

} // namespace kf::ui
