#include "model/outline_model.h"

#include "model/format.h"
#include "model/node_text.h"
#include "model/roles.h"
#include "model/status_style.h"

#include <QFont>

#include <algorithm>
#include <limits>

namespace kf::ui {

OutlineModel::OutlineModel(QObject *parent) : QAbstractItemModel(parent) {}

// internalId of an index is the node id of its row; the shown parent of a top-level row is 0.
const std::vector<std::int64_t> &OutlineModel::rowsOf(std::int64_t parentNode) const
{
    static const std::vector<std::int64_t> none;
    if (!m_snapshot)
        return none;
    return m_snapshot->children(parentNode ? parentNode : m_root);
}

std::int64_t OutlineModel::shownParent(std::int64_t node) const
{
    const NodeView *n = m_snapshot ? m_snapshot->node(node) : nullptr;
    if (!n || !n->record.parent || *n->record.parent == m_root)
        return 0;
    return *n->record.parent;
}

int OutlineModel::shownCount(std::int64_t parentNode) const
{
    const auto &rows = rowsOf(parentNode);
    return int(std::upper_bound(rows.begin(), rows.end(), m_limit) - rows.begin());
}

int OutlineModel::rowOf(std::int64_t node) const
{
    if (node > m_limit)
        return -1;
    const auto &rows = rowsOf(shownParent(node));
    auto it = std::lower_bound(rows.begin(), rows.end(), node); // children are ordered by id
    return it != rows.end() && *it == node ? int(it - rows.begin()) : -1;
}

void OutlineModel::setSnapshot(SnapshotPtr next)
{
    const SnapshotPtr old = m_snapshot;
    const std::int64_t nextRoot = next ? next->rootId().value_or(0) : 0;
    // An update of the same session keeps every node (ids only grow); anything else resets.
    bool incremental = old && next && old->path == next->path && m_root == nextRoot && m_root != 0 &&
        old->nodes.size() <= next->nodes.size();
    if (incremental)
        for (std::size_t i = 0; i < old->nodes.size() && incremental; ++i)
            incremental = next->nodes[i].id() == old->nodes[i].id() &&
                next->nodes[i].record.parent == old->nodes[i].record.parent;
    if (!incremental) {
        beginResetModel();
        m_limit = std::numeric_limits<std::int64_t>::max();
        m_snapshot = std::move(next);
        m_root = nextRoot;
        endResetModel();
        return;
    }
    m_limit = old->nodes.empty() ? 0 : old->nodes.back().id();
    m_snapshot = next;
    // New nodes come after all old ones and after their parents, so inserting them in id order
    // adds each row at the end of its parent's rows.
    for (std::size_t i = old->nodes.size(); i < next->nodes.size(); ++i) {
        const NodeView &n = next->nodes[i];
        if (n.record.kind == NodeKind::Root || !n.record.parent)
            continue;
        const std::int64_t parentNode = *n.record.parent == m_root ? 0 : *n.record.parent;
        const auto &rows = next->children(parentNode ? parentNode : m_root);
        const int row = int(std::find(rows.begin(), rows.end(), n.id()) - rows.begin());
        const QModelIndex parentIndex = parentNode ? indexOf(parentNode) : QModelIndex();
        beginInsertRows(parentIndex, row, row);
        // Views see the snapshot grow one node at a time: rows after this node stay hidden until
        // their own insertion is announced.
        m_limit = n.id();
        endInsertRows();
    }
    m_limit = std::numeric_limits<std::int64_t>::max();
    // Rows whose content changed: status, result, or whether they are on the best path. Rounds
    // and ideas also count and compare what is below them, which new rows change.
    for (std::size_t i = 0; i < old->nodes.size(); ++i) {
        const NodeView &a = old->nodes[i], &b = next->nodes[i];
        if (a.record == b.record && a.onBestPath == b.onBestPath && a.speedup == b.speedup && b.isCandidate())
            continue;
        const QModelIndex first = indexOf(b.id());
        if (first.isValid())
            emit dataChanged(first, first.siblingAtColumn(ColumnCount - 1));
    }
}

QModelIndex OutlineModel::indexOf(std::int64_t node) const
{
    if (!m_snapshot || !m_snapshot->node(node) || node == m_root)
        return {};
    const int row = rowOf(node);
    return row < 0 ? QModelIndex() : createIndex(row, 0, quintptr(node));
}

std::int64_t OutlineModel::nodeAt(const QModelIndex &index) const
{
    return index.isValid() ? std::int64_t(index.internalId()) : 0;
}

QModelIndex OutlineModel::index(int row, int column, const QModelIndex &parent) const
{
    if (row < 0 || column < 0 || column >= ColumnCount || (parent.isValid() && parent.column() != 0))
        return {};
    if (row >= shownCount(nodeAt(parent)))
        return {};
    return createIndex(row, column, quintptr(rowsOf(nodeAt(parent))[std::size_t(row)]));
}

QModelIndex OutlineModel::parent(const QModelIndex &child) const
{
    if (!child.isValid())
        return {};
    const std::int64_t p = shownParent(nodeAt(child));
    return p ? indexOf(p) : QModelIndex();
}

int OutlineModel::rowCount(const QModelIndex &parent) const
{
    if (parent.isValid() && parent.column() != 0)
        return 0;
    return shownCount(nodeAt(parent));
}

int OutlineModel::columnCount(const QModelIndex &) const { return ColumnCount; }

QVariant OutlineModel::data(const QModelIndex &index, int role) const
{
    const NodeView *n = index.isValid() && m_snapshot ? m_snapshot->node(nodeAt(index)) : nullptr;
    if (!n)
        return {};
    const QString status = qs(n->shownStatus);
    switch (role) {
    case Qt::DisplayRole:
        switch (index.column()) {
        case NameColumn:
            return nodeName(*n);
        case DetailsColumn:
            return nodeDetails(*m_snapshot, *n);
        case StatusColumn:
            return status;
        case TimeColumn:
            return formatMs(n->medianMs);
        case SpeedupColumn:
            return formatSpeedup(n->speedup);
        case FloorColumn:
            return formatPercent(n->percentOfFloor);
        }
        break;
    case Qt::DecorationRole:
        if (index.column() == NameColumn)
            return statusIcon(status, n->sanitizerUnchecked);
        break;
    case Qt::ToolTipRole:
        return nodeToolTip(*m_snapshot, *n); // what the columns cut short
    case ParamsRole:
        return compactParams(n->draft.params);
    case Qt::FontRole:
        if (n->id() == m_snapshot->bestNode) {
            QFont f;
            f.setBold(true);
            return f;
        }
        break;
    case Qt::TextAlignmentRole:
        if (index.column() >= TimeColumn)
            return QVariant(Qt::AlignRight | Qt::AlignVCenter);
        break;
    case NodeIdRole:
        return qint64(n->id());
    case KindRole:
        return qs(toString(n->record.kind));
    case StatusRole:
        return status;
    case TimeRole:
        return n->medianMs;
    case SpeedupRole:
        return n->speedup;
    case FloorPercentRole:
        return n->percentOfFloor;
    case EditedRole:
        return n->record.edited;
    case SanitizerUncheckedRole:
        return n->sanitizerUnchecked;
    case BestPathRole:
        return n->onBestPath;
    case RoundRole:
        return n->record.round;
    case SortRole:
        switch (index.column()) {
        case NameColumn:
            return qint64(n->id());
        case DetailsColumn:
            return nodeDetails(*m_snapshot, *n);
        case StatusColumn:
            return status;
        case TimeColumn:
            return n->medianMs > 0 ? n->medianMs : 1e300; // unknown times sort last
        case SpeedupColumn:
            return n->speedup;
        case FloorColumn:
            return n->percentOfFloor;
        }
        break;
    }
    return {};
}

QVariant OutlineModel::headerData(int section, Qt::Orientation o, int role) const
{
    if (o != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case NameColumn:
        return tr("Node");
    case DetailsColumn:
        return tr("Parameters");
    case StatusColumn:
        return tr("Status");
    case TimeColumn:
        return tr("Time");
    case SpeedupColumn:
        return tr("Speedup");
    case FloorColumn:
        return tr("% of floor");
    }
    return {};
}

} // namespace kf::ui
