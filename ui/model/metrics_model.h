#pragma once
// The metrics of the selected candidate, and of a pinned baseline candidate side by side: verdict,
// precision, times, speedup, % of floor, errors, and per kernel registers, shared memory, spills
// and theoretical occupancy.
#include "model/session_snapshot.h"

#include <QAbstractTableModel>
#include <QStringList>

#include <utility>
#include <vector>

namespace kf::ui {

using MetricList = std::vector<std::pair<QString, QString>>; // name, value
// A candidate's metrics, in display order.
MetricList candidateMetrics(const SessionSnapshot &, const NodeView &);

class MetricsModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { NameColumn, SelectedColumn, PinnedColumn, ColumnCount };
    explicit MetricsModel(QObject *parent = nullptr);

    // Either may be 0 (none). The pinned column is empty without a pinned candidate.
    void setNodes(SnapshotPtr, std::int64_t selected, std::int64_t pinned);
    std::int64_t selected() const { return m_selected; }
    std::int64_t pinned() const { return m_pinned; }
    QString valueOf(const QString &metric, Column = SelectedColumn) const; // for tests and copies

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation, int role = Qt::DisplayRole) const override;

private:
    struct Row {
        QString name, selected, pinned;
    };
    std::vector<Row> m_rows;
    std::int64_t m_selected = 0, m_pinned = 0;
};

} // namespace kf::ui
