#pragma once
// The metrics of the selected candidate, and of a pinned baseline candidate side by side with the
// difference: verdict, precision, times, speedup, floors, % of floor, errors, and per kernel (in
// launch order, so that the first kernel of one candidate faces the first of the other whatever
// they are called) its name, registers, shared memory, spills and theoretical occupancy.
#include "model/session_snapshot.h"

#include <QAbstractTableModel>
#include <QStringList>

#include <optional>
#include <vector>

namespace kf::ui {

struct Metric {
    enum class Better { Neither, Lower, Higher }; // which way is an improvement
    QString name;                                 // what the row means; rows of two candidates align by it
    QString text;                                 // the value as shown
    std::optional<double> value;                  // the number behind it, for the difference
    QString unit;                                 // of the difference: "ms", "×", "%", "B", ""
    Better better = Better::Neither;
};
using MetricList = std::vector<Metric>;
// A candidate's metrics, in display order.
MetricList candidateMetrics(const SessionSnapshot &, const NodeView &);
// "−0.1100 ms (−15.6 %)": the selected value minus the baseline's, "" when either is unknown.
QString metricDelta(const Metric &selected, const Metric &baseline);

class MetricsModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { NameColumn, SelectedColumn, PinnedColumn, DeltaColumn, ColumnCount };
    explicit MetricsModel(QObject *parent = nullptr);

    // Either may be 0 (none). The pinned and difference columns are empty without a pinned candidate.
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
        QString name;
        std::optional<Metric> selected, pinned;
    };
    std::vector<Row> m_rows;
    std::int64_t m_selected = 0, m_pinned = 0;
};

} // namespace kf::ui
