#include "round_chart.h"

#include "model/format.h"
#include "model/points_model.h"
#include "model/roles.h"
#include "model/status_style.h"
#include "model/trajectory_model.h"

#include <QChart>
#include <QChartView>
#include <QHelpEvent>
#include <QLabel>
#include <QLegend>
#include <QLegendMarker>
#include <QLineSeries>
#include <QScatterSeries>
#include <QSortFilterProxyModel>
#include <QToolTip>
#include <QVBoxLayout>
#include <QVXYModelMapper>
#include <QValueAxis>

#include <algorithm>
#include <cmath>

namespace kf::ui {

namespace {

// Rounds before the first correct kernel have no best time: no point on the line.
class TimedRounds : public QSortFilterProxyModel {
public:
    using QSortFilterProxyModel::QSortFilterProxyModel;

protected:
    bool filterAcceptsRow(int row, const QModelIndex &parent) const override
    {
        return sourceModel()->index(row, TrajectoryModel::SpeedupColumn, parent).data().toDouble() > 0;
    }
};

} // namespace

RoundChart::RoundChart(TrajectoryModel *trajectory, PointsModel *points, QWidget *parent)
    : QWidget(parent), m_trajectory(trajectory), m_pointsModel(points)
{
    m_timedRounds = new TimedRounds(this);
    m_timedRounds->setSourceModel(trajectory);

    m_chart = new QChart;
    m_chart->setTitle(tr("Speedup over eager PyTorch, by round"));
    m_chart->legend()->setAlignment(Qt::AlignBottom);
    m_chart->setMargins(QMargins(4, 4, 4, 4));

    m_points = new QScatterSeries(this);
    m_points->setName(tr("candidates"));
    m_points->setMarkerSize(9);
    m_points->setColor(statusColor(QStringLiteral("correct")).lighter(130));
    m_points->setBorderColor(statusColor(QStringLiteral("correct")).darker(130));
    m_best = new QLineSeries(this);
    m_best->setName(tr("best so far"));
    m_best->setPen(QPen(bestPathColor(), 3));
    m_best->setPointsVisible(true);
    m_eager = new QLineSeries(this);
    m_eager->setName(tr("eager PyTorch (1.0×)"));
    m_eager->setPen(QPen(QColor(0x60, 0x60, 0x60), 1.5, Qt::DashLine));
    m_compile = new QLineSeries(this);
    m_compile->setName(tr("torch.compile"));
    m_compile->setPen(QPen(QColor(0x1e, 0x40, 0xaf), 1.5, Qt::DashDotLine));
    m_selected = new QScatterSeries(this);
    m_selected->setName(tr("selected"));
    m_selected->setMarkerSize(16);
    m_selected->setColor(Qt::transparent);
    m_selected->setBorderColor(QColor(0x1e, 0x40, 0xaf));
    m_selected->setPen(QPen(QColor(0x1e, 0x40, 0xaf), 3));

    auto *bestMap = new QVXYModelMapper(this);
    bestMap->setXColumn(TrajectoryModel::RoundColumn);
    bestMap->setYColumn(TrajectoryModel::SpeedupColumn);
    bestMap->setSeries(m_best);
    bestMap->setModel(m_timedRounds);
    auto *pointMap = new QVXYModelMapper(this);
    pointMap->setXColumn(PointsModel::XColumn);
    pointMap->setYColumn(PointsModel::SpeedupColumn);
    pointMap->setSeries(m_points);
    pointMap->setModel(points);

    for (QAbstractSeries *s :
         std::initializer_list<QAbstractSeries *>{m_eager, m_compile, m_points, m_best, m_selected})
        m_chart->addSeries(s);
    m_x = new QValueAxis(this);
    m_x->setTitleText(tr("round"));
    m_x->setLabelFormat(QStringLiteral("%d"));
    m_y = new QValueAxis(this);
    m_y->setTitleText(tr("speedup (×)"));
    m_y->setLabelFormat(QStringLiteral("%.2f"));
    m_chart->addAxis(m_x, Qt::AlignBottom);
    m_chart->addAxis(m_y, Qt::AlignLeft);
    for (QAbstractSeries *s : m_chart->series()) {
        s->attachAxis(m_x);
        s->attachAxis(m_y);
    }
    // The selection ring is not a series people need to read in the legend.
    if (auto *marker = m_chart->legend()->markers(m_selected).value(0))
        marker->setVisible(false);

    m_view = new QChartView(m_chart, this);
    m_view->setObjectName(QStringLiteral("roundChart"));
    m_view->setRenderHint(QPainter::Antialiasing);
    auto *l = new QVBoxLayout(this);
    l->setContentsMargins(0, 0, 0, 0);
    l->addWidget(m_view);
    m_live = new QLabel(this);
    m_live->setObjectName(QStringLiteral("roundChartLive"));
    m_live->setWordWrap(true);
    m_live->hide();
    l->addWidget(m_live);

    // Tooltips come from the view's own tooltip events (the nearest point within a few pixels),
    // so they work over the selection ring and the line's points too.
    m_view->viewport()->installEventFilter(this);
    m_view->viewport()->setMouseTracking(true);
    connect(m_points, &QScatterSeries::clicked, this, [this](const QPointF &p) {
        if (const std::int64_t node = nodeNear(p))
            emit nodeClicked(node);
    });
    for (QAbstractItemModel *m :
         {static_cast<QAbstractItemModel *>(trajectory), static_cast<QAbstractItemModel *>(points)}) {
        connect(m, &QAbstractItemModel::modelReset, this, &RoundChart::updateRange);
        connect(m, &QAbstractItemModel::rowsInserted, this, &RoundChart::updateRange);
        connect(m, &QAbstractItemModel::dataChanged, this, &RoundChart::updateRange);
    }
    updateRange();
}

void RoundChart::setLiveStatus(const QString &text)
{
    m_live->setText(text);
    m_live->setVisible(!text.isEmpty());
}

QString RoundChart::liveStatus() const { return m_live->text(); }

std::int64_t RoundChart::nodeNear(const QPointF &value) const
{
    std::int64_t best = 0;
    double bestD = 1e300;
    for (int r = 0; r < m_pointsModel->rowCount(); ++r) {
        const double dx = m_pointsModel->index(r, PointsModel::XColumn).data().toDouble() - value.x();
        const double dy = m_pointsModel->index(r, PointsModel::SpeedupColumn).data().toDouble() - value.y();
        const double d = dx * dx + dy * dy;
        if (d < bestD) {
            bestD = d;
            best = m_pointsModel->nodeAt(r);
        }
    }
    return bestD < 1e-9 ? best : 0;
}

void RoundChart::setReferenceLines(double eagerMs, double compiledMs)
{
    m_compiledSpeedup = eagerMs > 0 && compiledMs > 0 ? eagerMs / compiledMs : 0;
    updateRange();
}

void RoundChart::selectNode(std::int64_t node)
{
    m_selectedNode = node;
    m_selected->clear();
    const int row = m_pointsModel->rowOfNode(node);
    if (row >= 0)
        m_selected->append(m_pointsModel->index(row, PointsModel::XColumn).data().toDouble(),
                           m_pointsModel->index(row, PointsModel::SpeedupColumn).data().toDouble());
}

void RoundChart::updateRange()
{
    int maxRound = 1;
    double maxY = 1.2;
    for (int r = 0; r < m_trajectory->rowCount(); ++r) {
        maxRound = std::max(maxRound, m_trajectory->index(r, TrajectoryModel::RoundColumn).data().toInt());
        maxY = std::max(maxY, m_trajectory->index(r, TrajectoryModel::SpeedupColumn).data().toDouble());
    }
    for (int r = 0; r < m_pointsModel->rowCount(); ++r) {
        maxRound = std::max(maxRound, m_pointsModel->index(r, PointsModel::RoundColumn).data().toInt());
        maxY = std::max(maxY, m_pointsModel->index(r, PointsModel::SpeedupColumn).data().toDouble());
    }
    maxY = std::max(maxY, m_compiledSpeedup);
    const double x0 = 0.5, x1 = maxRound + 0.5;
    m_x->setRange(x0, x1);
    m_x->setTickCount(std::min(maxRound, 12) + 1);
    m_x->setTickType(QValueAxis::TicksDynamic);
    m_x->setTickAnchor(0);
    m_x->setTickInterval(std::max(1, int(std::ceil(maxRound / 12.0))));
    m_y->setRange(0, std::ceil(maxY * 1.15 * 4) / 4);
    m_y->applyNiceNumbers();
    m_eager->replace(QList<QPointF>{{x0, 1.0}, {x1, 1.0}});
    if (m_compiledSpeedup > 0)
        m_compile->replace(QList<QPointF>{{x0, m_compiledSpeedup}, {x1, m_compiledSpeedup}});
    else
        m_compile->clear();
    if (auto *marker = m_chart->legend()->markers(m_compile).value(0))
        marker->setVisible(m_compiledSpeedup > 0);
    selectNode(m_selectedNode);
}

QPoint RoundChart::toView(const QPointF &value, QAbstractSeries *series) const
{
    return m_view->mapFromScene(m_chart->mapToScene(m_chart->mapToPosition(value, series)));
}

QPoint RoundChart::pointPosition(std::int64_t node) const
{
    const int row = m_pointsModel->rowOfNode(node);
    if (row < 0)
        return {};
    const QPointF v(m_pointsModel->index(row, PointsModel::XColumn).data().toDouble(),
                    m_pointsModel->index(row, PointsModel::SpeedupColumn).data().toDouble());
    return toView(v, m_points);
}

QString RoundChart::toolTipAt(const QPoint &pos) const
{
    constexpr int kReach = 8; // pixels
    QString tip;
    int bestDistance = kReach * kReach + 1;
    auto consider = [&](const QPointF &value, QAbstractSeries *series, const QString &text) {
        const QPoint d = toView(value, series) - pos;
        const int distance = d.x() * d.x() + d.y() * d.y();
        if (distance < bestDistance) {
            bestDistance = distance;
            tip = text;
        }
    };
    for (int r = 0; r < m_pointsModel->rowCount(); ++r)
        consider({m_pointsModel->index(r, PointsModel::XColumn).data().toDouble(),
                  m_pointsModel->index(r, PointsModel::SpeedupColumn).data().toDouble()},
                 m_points, m_pointsModel->index(r, 0).data(Qt::ToolTipRole).toString());
    for (int r = 0; r < m_timedRounds->rowCount(); ++r) {
        const QModelIndex row = m_timedRounds->index(r, TrajectoryModel::RoundColumn);
        const QModelIndex best = m_timedRounds->index(r, TrajectoryModel::BestMsColumn);
        const double speedup = m_timedRounds->index(r, TrajectoryModel::SpeedupColumn).data().toDouble();
        consider({row.data().toDouble(), speedup}, m_best,
                 tr("Best after round %1: %2, %3")
                     .arg(row.data().toInt())
                     .arg(formatMs(best.data().toDouble()), formatSpeedup(speedup)));
    }
    return tip;
}

bool RoundChart::eventFilter(QObject *o, QEvent *e)
{
    if (o == m_view->viewport() && e->type() == QEvent::ToolTip) {
        auto *help = static_cast<QHelpEvent *>(e);
        const QString tip = toolTipAt(help->pos());
        if (tip.isEmpty())
            QToolTip::hideText();
        else
            QToolTip::showText(help->globalPos(), tip, m_view->viewport());
        return true;
    }
    return QWidget::eventFilter(o, e);
}

bool RoundChart::savePng(const QString &file, QString *error) const
{
    const QPixmap pm = m_view->grab();
    if (pm.save(file, "PNG"))
        return true;
    if (error)
        *error = tr("cannot write %1").arg(file);
    return false;
}

} // namespace kf::ui
