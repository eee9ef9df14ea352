#include "graph_view.h"

#include "model/format.h"
#include "model/status_style.h"

#include <QGraphicsItem>
#include <QGraphicsScene>
#include <QPainter>
#include <QStyleOptionGraphicsItem>
#include <QWheelEvent>

#include <cmath>
#include <functional>

namespace kf::ui {

namespace {

constexpr double kColumn = 190, kRow = 34, kWidth = 160, kHeight = 26;

// One node: a rounded box in its status colour with its name and, for timed candidates, speedup.
class NodeItem : public QGraphicsItem {
public:
    NodeItem(const NodeView &n, bool best) : m_id(n.id()), m_best(n.onBestPath), m_isBest(best)
    {
        m_status = qs(n.record.status);
        m_text = qs(n.record.title);
        if (n.isCandidate()) {
            m_text = n.speedup > 0 ? QStringLiteral("#%1  %2").arg(n.id()).arg(formatSpeedup(n.speedup))
                                   : QStringLiteral("#%1  %2").arg(n.id()).arg(m_status);
            if (n.record.edited)
                m_text += QStringLiteral("  ✎");
        }
        m_candidate = n.isCandidate();
        setFlag(ItemIsSelectable);
        setToolTip(QStringLiteral("#%1 %2\n%3%4").arg(n.id()).arg(qs(n.record.title), m_status,
                                                        n.medianMs > 0 ? QStringLiteral(", %1, %2").arg(formatMs(n.medianMs), formatSpeedup(n.speedup))
                                                                       : QString()));
        setData(0, qint64(n.id()));
    }
    QRectF boundingRect() const override { return QRectF(-3, -3, kWidth + 6, kHeight + 6); }
    void paint(QPainter *p, const QStyleOptionGraphicsItem *, QWidget *) override
    {
        p->setRenderHint(QPainter::Antialiasing);
        const QColor c = m_status.isEmpty() ? QColor(0x8a, 0x99, 0xb4) : statusColor(m_status);
        QPen pen(m_best ? bestPathColor() : c.darker(150), m_best ? 2.5 : 1);
        if (isSelected())
            pen = QPen(QColor(0x1e, 0x40, 0xaf), 3);
        p->setPen(pen);
        // A tint of the status colour, so that the text stays readable; the best kernel is darker.
        const double t = m_isBest ? 0.55 : 0.28;
        const QColor fill = QColor::fromRgbF(1 - t + t * c.redF(), 1 - t + t * c.greenF(), 1 - t + t * c.blueF());
        p->setBrush(m_candidate ? fill : QColor(0xee, 0xf1, 0xf6));
        p->drawRoundedRect(QRectF(0, 0, kWidth, kHeight), 6, 6);
        p->setPen(QColor(0x20, 0x20, 0x20));
        QFont f = p->font();
        f.setPointSizeF(8.5);
        f.setBold(m_isBest);
        p->setFont(f);
        const QString text = p->fontMetrics().elidedText(m_text, Qt::ElideRight, int(kWidth - 10));
        p->drawText(QRectF(5, 0, kWidth - 10, kHeight), Qt::AlignVCenter | Qt::AlignLeft, text);
    }
    std::int64_t id() const { return m_id; }
    bool onBest() const { return m_best; }

private:
    std::int64_t m_id;
    bool m_best, m_isBest, m_candidate = false;
    QString m_status, m_text;
};

} // namespace

GraphView::GraphView(QWidget *parent) : QGraphicsView(parent)
{
    setScene(new QGraphicsScene(this));
    setDragMode(QGraphicsView::ScrollHandDrag);
    setRenderHint(QPainter::Antialiasing);
    setTransformationAnchor(QGraphicsView::AnchorUnderMouse);
    setBackgroundBrush(QColor(0xfa, 0xfb, 0xfd));
    connect(scene(), &QGraphicsScene::selectionChanged, this, [this] {
        if (m_selecting)
            return;
        const std::int64_t id = selectedNode();
        if (id)
            emit nodeSelected(id);
    });
}

void GraphView::setSnapshot(const SnapshotPtr &s)
{
    const bool same = m_snapshot && s && m_snapshot->path == s->path;
    m_snapshot = s;
    if (!same)
        m_autoFit = true;
    rebuild();
}

void GraphView::rebuild()
{
    const std::int64_t selected = selectedNode();
    m_selecting = true;
    scene()->clear();
    m_items.clear();
    m_selecting = false;
    if (!m_snapshot)
        return;
    // Tidy layout: leaves take the next row; a parent sits at the middle of its children.
    QHash<qint64, QPointF> pos;
    double nextRow = 0;
    std::function<double(std::int64_t, int)> place = [&](std::int64_t id, int depth) -> double {
        const auto &kids = m_snapshot->children(id);
        double y;
        if (kids.empty()) {
            y = nextRow++ * kRow;
        } else {
            double first = 0, last = 0;
            for (std::size_t i = 0; i < kids.size(); ++i) {
                const double c = place(kids[i], depth + 1);
                if (i == 0)
                    first = c;
                last = c;
            }
            y = (first + last) / 2;
        }
        pos.insert(id, QPointF(depth * kColumn, y));
        return y;
    };
    for (const NodeView &n : m_snapshot->nodes)
        if (!n.record.parent || !m_snapshot->node(*n.record.parent))
            place(n.id(), 0);

    for (const NodeView &n : m_snapshot->nodes) {
        if (!n.record.parent || !pos.contains(*n.record.parent))
            continue;
        const QPointF a = pos.value(*n.record.parent) + QPointF(kWidth, kHeight / 2);
        const QPointF b = pos.value(n.id()) + QPointF(0, kHeight / 2);
        QPainterPath path(a);
        path.cubicTo(a + QPointF(kColumn - kWidth, 0) / 2, b - QPointF(kColumn - kWidth, 0) / 2, b);
        const bool best = n.onBestPath;
        auto *edge = scene()->addPath(path, QPen(best ? bestPathColor() : QColor(0xb0, 0xb8, 0xc8), best ? 3 : 1.2));
        edge->setZValue(best ? -1 : -2);
    }
    for (const NodeView &n : m_snapshot->nodes) {
        auto *item = new NodeItem(n, n.id() == m_snapshot->bestNode);
        item->setPos(pos.value(n.id()));
        scene()->addItem(item);
        m_items.insert(n.id(), item);
    }
    scene()->setSceneRect(scene()->itemsBoundingRect().adjusted(-20, -20, 20, 20));
    if (selected)
        selectNode(selected);
    if (m_autoFit)
        fit();
}

void GraphView::selectNode(std::int64_t node)
{
    m_selecting = true;
    scene()->clearSelection();
    if (QGraphicsItem *item = m_items.value(node)) {
        item->setSelected(true);
        ensureVisible(item, 40, 40);
    }
    m_selecting = false;
}

std::int64_t GraphView::selectedNode() const
{
    const auto items = scene()->selectedItems();
    return items.isEmpty() ? 0 : items.first()->data(0).toLongLong();
}

QPointF GraphView::nodePosition(std::int64_t node) const
{
    QGraphicsItem *i = m_items.value(node);
    return i ? i->pos() : QPointF();
}

bool GraphView::isOnBestPath(std::int64_t node) const
{
    auto *i = static_cast<NodeItem *>(m_items.value(node));
    return i && i->onBest();
}

void GraphView::zoomIn()
{
    m_autoFit = false;
    scale(1.25, 1.25);
}

void GraphView::zoomOut()
{
    m_autoFit = false;
    scale(0.8, 0.8);
}

void GraphView::resizeEvent(QResizeEvent *e)
{
    QGraphicsView::resizeEvent(e);
    if (m_autoFit)
        fit();
}

void GraphView::fit()
{
    m_autoFit = true;
    fitInView(scene()->sceneRect(), Qt::KeepAspectRatio);
    // Never blow a small tree up past its natural size.
    if (transform().m11() > 1.0)
        setTransform(QTransform());
}

void GraphView::wheelEvent(QWheelEvent *e)
{
    m_autoFit = false;
    const double factor = std::pow(1.0015, e->angleDelta().y());
    scale(factor, factor);
    e->accept();
}

} // namespace kf::ui
