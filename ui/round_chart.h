#pragma once
// The per-round chart (Qt Charts): the best speedup after each round as a line, every timed
// candidate as a point (its tooltip names it, a click selects it), a line at 1.0× (eager PyTorch) and
// one at torch.compile's speedup where the session knows it. It reads two table models: the
// trajectory (through a proxy that drops rounds without a correct kernel yet) and the points.
#include <QWidget>

#include <cstdint>

class QAbstractSeries;
class QChart;
class QLabel;
class QChartView;
class QLineSeries;
class QScatterSeries;
class QValueAxis;
class QSortFilterProxyModel;

namespace kf::ui {

class PointsModel;
class TrajectoryModel;

class RoundChart : public QWidget {
    Q_OBJECT
public:
    RoundChart(TrajectoryModel *trajectory, PointsModel *points, QWidget *parent = nullptr);

    void setReferenceLines(double eagerMs, double compiledMs); // compiledMs 0: unknown
    // A line under the chart while a search runs: the budget left and what the sanitizer gate does
    // (Engine's SearchProgress::live); empty hides it.
    void setLiveStatus(const QString &text);
    QString liveStatus() const;
    void selectNode(std::int64_t node);
    bool savePng(const QString &file, QString *error = nullptr) const;
    QChartView *chartView() const { return m_view; }
    QScatterSeries *pointSeries() const { return m_points; }
    QLineSeries *bestSeries() const { return m_best; }
    QLineSeries *compileSeries() const { return m_compile; }
    // Where a point's centre is in widget coordinates of chartView() (tests click there).
    QPoint pointPosition(std::int64_t node) const;
    // The tooltip at a position of chartView()'s viewport: the candidate or the round's best
    // within a few pixels of it, "" when none.
    QString toolTipAt(const QPoint &) const;

protected:
    bool eventFilter(QObject *, QEvent *) override;

signals:
    void nodeClicked(std::int64_t node);

private:
    void updateRange();
    std::int64_t nodeNear(const QPointF &value) const;
    QPoint toView(const QPointF &value, QAbstractSeries *) const;

    TrajectoryModel *m_trajectory;
    PointsModel *m_pointsModel;
    QSortFilterProxyModel *m_timedRounds;
    QChart *m_chart;
    QChartView *m_view;
    QLineSeries *m_best, *m_eager, *m_compile;
    QScatterSeries *m_points, *m_selected;
    QValueAxis *m_x, *m_y;
    QLabel *m_live;
    double m_compiledSpeedup = 0;
    std::int64_t m_selectedNode = 0;
};

} // namespace kf::ui
