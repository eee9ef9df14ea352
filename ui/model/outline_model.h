#pragma once
// The search tree as an item model: rounds -> ideas -> candidates (repairs and hand edits under
// the candidate they came from). The session's root node is not shown: its children are the
// top level. A newer snapshot of the same session inserts the new rows and updates changed ones,
// so selection and expansion survive while a search runs; another session resets the model.
#include "model/session_snapshot.h"

#include <QAbstractItemModel>

#include <limits>
#include <vector>

namespace kf::ui {

class OutlineModel : public QAbstractItemModel {
    Q_OBJECT
public:
    // Details: a candidate's parameters, an idea's difference from the other ideas of its round,
    // a round's counts (model/node_text.h).
    enum Column { NameColumn, DetailsColumn, StatusColumn, TimeColumn, SpeedupColumn, FloorColumn, ColumnCount };

    explicit OutlineModel(QObject *parent = nullptr);

    void setSnapshot(SnapshotPtr snapshot);
    const SnapshotPtr &snapshot() const { return m_snapshot; }
    // The index (column 0) of a node, invalid when it is not shown.
    QModelIndex indexOf(std::int64_t node) const;
    std::int64_t nodeAt(const QModelIndex &) const;

    QModelIndex index(int row, int column, const QModelIndex &parent = {}) const override;
    QModelIndex parent(const QModelIndex &child) const override;
    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation, int role = Qt::DisplayRole) const override;

private:
    const std::vector<std::int64_t> &rowsOf(std::int64_t parentNode) const;
    std::int64_t shownParent(std::int64_t node) const; // 0 for top-level rows
    int rowOf(std::int64_t node) const;
    int shownCount(std::int64_t parentNode) const;

    SnapshotPtr m_snapshot;
    std::int64_t m_root = 0;
    std::int64_t m_limit =
        std::numeric_limits<std::int64_t>::max(); // nodes with a larger id are not shown yet (during an insertion)
};

} // namespace kf::ui
