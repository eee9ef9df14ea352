#include "graph_view.h"

#include "model/format.h"
#include "model/node_text.h"
#include "model/status_style.h"

#include <QGraphicsItem>
#include <QGraphicsScene>
#include <QMouseEvent>
#include <QPainter>
#include <QScrollBar>
#include <QStyleOptionGraphicsItem>
#include <QWheelEvent>

#include <cmath>
#include <functional>

namespace kf::ui {

namespace {

// Two lines per node: what it is, and what sets it apart (speedup, parameters, counts).
constexpr double kColumn = 250, kRow = 50, kWidth = 210, kHeight = 40, kHandle = 14;

QRectF handleRect() { return QRectF(kWidth - kHandle / 2, kHeight / 2 - kHandle / 2, kHandle, kHandle); }

class NodeItem : public QGraphicsItem {
public:
    NodeItem(const SessionSnapshot &s, const NodeView &n, bool expandable, bool expanded)
        : m_id(n.id()), m_best(n.onBestPath), m_isBest(n.id() == s.bestNode), m_candidate(n.isCandidate()),
          m_expandable(expandable), m_expanded(expanded), m_unchecked(n.sanitizerUnchecked)
    {
        m_status = qs(n.shownStatus);
        const QString details = nodeDetails(s, n);
        if (m_candidate) {
            m_line1 = QStringLiteral("#%1  %2").arg(n.id()).arg(n.speedup > 0 ? formatSpeedup(n.speedup) : m_status);
            if (n.record.edited)
                m_line1 += QStringLiteral("  ✎");
            m_line2 = details.isEmpty() ? qs(n.record.title) : details;
        } else {
            m_line1 = qs(n.record.title);
            m_line2 = details;
            if (n.speedup > 0)
                m_line2 = m_line2.isEmpty() ? QObject::tr("best %1").arg(formatSpeedup(n.speedup))
                                            : QObject::tr("%1 · best %2").arg(m_line2, formatSpeedup(n.speedup));
        }
        if (expandable && !expanded) {
            const NodeCounts c = countBelow(s, n.id());
            m_line2 = QObject::tr("+%1 below").arg(c.candidates) +
                (m_line2.isEmpty() ? QString() : QStringLiteral(" · ") + m_line2);
        }
        setFlag(ItemIsSelectable);
        setToolTip(nodeToolTip(s, n));
        setData(0, qint64(n.id()));
    }
    QRectF boundingRect() const override { return QRectF(-3, -3, kWidth + kHandle / 2 + 6, kHeight + 6); }
    void paint(QPainter *p, const QStyleOptionGraphicsItem *, QWidget *) override
    {
        p->setRenderHint(QPainter::Antialiasing);
        const QColor c = statusColor(m_status);
        QPen pen(m_best ? bestPathColor() : c.darker(150), m_best ? 2.5 : 1);
        if (m_unchecked) // compute-sanitizer could not judge it: a dashed orange outline
            pen = QPen(uncheckedColor(), 2, Qt::DashLine);
        if (isSelected())
            pen = QPen(QColor(0x1e, 0x40, 0xaf), 3);
        p->setPen(pen);
        // A tint of the status colour, so that the text stays readable; the best kernel is darker.
        const double t = m_isBest ? 0.55 : m_candidate ? 0.28 : 0.12;
        const QColor fill = QColor::fromRgbF(1 - t + t * c.redF(), 1 - t + t * c.greenF(), 1 - t + t * c.blueF());
        p->setBrush(fill);
        p->drawRoundedRect(QRectF(0, 0, kWidth, kHeight), 6, 6);
        // A status dot for rounds and ideas, whose fill is pale.
        if (!m_candidate) {
            p->setPen(Qt::NoPen);
            p->setBrush(c);
            p->drawEllipse(QRectF(6, 7, 8, 8));
        }
        const double left = m_candidate ? 6 : 18;
        const double textWidth = kWidth - left - (m_expandable ? kHandle : 6);
        QFont f = p->font();
        f.setPointSizeF(9);
        f.setBold(m_isBest || !m_candidate);
        p->setFont(f);
        p->setPen(QColor(0x20, 0x20, 0x20));
        p->drawText(QRectF(left, 2, textWidth, kHeight / 2), Qt::AlignVCenter | Qt::AlignLeft,
                    p->fontMetrics().elidedText(m_line1, Qt::ElideRight, int(textWidth)));
        f.setPointSizeF(8);
        f.setBold(false);
        p->setFont(f);
        p->setPen(QColor(0x45, 0x45, 0x50));
        p->drawText(
            QRectF(6, kHeight / 2, kWidth - 6 - (m_expandable ? kHandle : 6), kHeight / 2 - 2),
            Qt::AlignVCenter | Qt::AlignLeft,
            p->fontMetrics().elidedText(m_line2, Qt::ElideRight, int(kWidth - 6 - (m_expandable ? kHandle : 6))));
        if (m_expandable) {
            const QRectF h = handleRect();
            p->setPen(QPen(QColor(0x50, 0x58, 0x68), 1));
            p->setBrush(Qt::white);
            p->drawEllipse(h);
            p->drawLine(QPointF(h.left() + 3.5, h.center().y()), QPointF(h.right() - 3.5, h.center().y()));
            if (!m_expanded)
                p->drawLine(QPointF(h.center().x(), h.top() + 3.5), QPointF(h.center().x(), h.bottom() - 3.5));
        }
    }
    bool onBest() const { return m_best; }

private:
    std::int64_t m_id;
    bool m_best, m_isBest, m_candidate, m_expandable, m_expanded, m_unchecked;
    QString m_status, m_line1, m_line2;
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
    if (!same) {
        m_autoFit = true;
        m_expanded.clear();
    }
    rebuild();
}

bool GraphView::hasChildren(std::int64_t node) const { return m_snapshot && !m_snapshot->children(node).empty(); }

bool GraphView::isExpanded(std::int64_t node) const
{
    const NodeView *n = m_snapshot ? m_snapshot->node(node) : nullptr;
    return n && (n->record.kind == NodeKind::Root || m_expanded.contains(node));
}

void GraphView::setExpandedNodes(const QSet<qint64> &nodes)
{
    if (nodes == m_expanded)
        return;
    m_expanded = nodes;
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
    // Tidy layout over the shown nodes: leaves take the next row; a parent sits at the middle of
    // its shown children.
    QHash<qint64, QPointF> pos;
    double nextRow = 0;
    std::function<double(std::int64_t, int)> place = [&](std::int64_t id, int depth) -> double {
        const auto &kids = m_snapshot->children(id);
        double y;
        if (kids.empty() || !isExpanded(id)) {
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
        if (!pos.contains(n.id()) || !n.record.parent || !pos.contains(*n.record.parent))
            continue;
        const QPointF a = pos.value(*n.record.parent) + QPointF(kWidth + kHandle / 2, kHeight / 2);
        const QPointF b = pos.value(n.id()) + QPointF(0, kHeight / 2);
        QPainterPath path(a);
        const double bend = (kColumn - kWidth - kHandle / 2) / 2;
        path.cubicTo(a + QPointF(bend, 0), b - QPointF(bend, 0), b);
        const bool best = n.onBestPath;
        auto *edge = scene()->addPath(path, QPen(best ? bestPathColor() : QColor(0xb0, 0xb8, 0xc8), best ? 3 : 1.2));
        edge->setZValue(best ? -1 : -2);
    }
    for (const NodeView &n : m_snapshot->nodes) {
        if (!pos.contains(n.id()))
            continue;
        const bool expandable = n.record.kind != NodeKind::Root && hasChildren(n.id());
        auto *item = new NodeItem(*m_snapshot, n, expandable, isExpanded(n.id()));
        item->setPos(pos.value(n.id()));
        scene()->addItem(item);
        m_items.insert(n.id(), item);
    }
    scene()->setSceneRect(scene()->itemsBoundingRect().adjusted(-20, -20, 20, 20));
    if (selected && m_items.contains(selected)) {
        m_selecting = true;
        m_items.value(selected)->setSelected(true);
        m_selecting = false;
    }
    if (m_autoFit)
        fit();
}

void GraphView::selectNode(std::int64_t node)
{
    // Reveal a node inside a collapsed one.
    if (node && m_snapshot && !m_items.contains(node) && m_snapshot->node(node)) {
        QSet<qint64> expanded = m_expanded;
        const NodeView *n = m_snapshot->node(node);
        for (std::size_t hops = 0; n && n->record.parent && hops <= m_snapshot->nodes.size(); ++hops) {
            expanded.insert(*n->record.parent);
            n = m_snapshot->node(*n->record.parent);
        }
        setExpandedNodes(expanded);
    }
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

QString GraphView::toolTipOf(std::int64_t node) const
{
    QGraphicsItem *i = m_items.value(node);
    return i ? i->toolTip() : QString();
}

bool GraphView::isOnBestPath(std::int64_t node) const
{
    auto *i = static_cast<NodeItem *>(m_items.value(node));
    return i && i->onBest();
}

std::int64_t GraphView::nodeAtView(const QPoint &p, bool *onHandle) const
{
    for (QGraphicsItem *i : items(p)) {
        const std::int64_t id = i->data(0).toLongLong();
        if (!id || !m_items.contains(id))
            continue;
        if (onHandle)
            *onHandle = hasChildren(id) && handleRect().contains(i->mapFromScene(mapToScene(p)));
        return id;
    }
    return 0;
}

void GraphView::mousePressEvent(QMouseEvent *e)
{
    bool onHandle = false;
    const std::int64_t id = e->button() == Qt::LeftButton ? nodeAtView(e->pos(), &onHandle) : 0;
    if (id && onHandle) {
        emit expansionRequested(id, !isExpanded(id));
        e->accept();
        return;
    }
    QGraphicsView::mousePressEvent(e);
}

void GraphView::mouseDoubleClickEvent(QMouseEvent *e)
{
    const std::int64_t id = e->button() == Qt::LeftButton ? nodeAtView(e->pos()) : 0;
    if (id && hasChildren(id) && m_snapshot->node(id)->record.kind != NodeKind::Root) {
        emit expansionRequested(id, !isExpanded(id));
        e->accept();
        return;
    }
    QGraphicsView::mouseDoubleClickEvent(e);
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
    // Never blow a small tree up past its natural size, nor shrink a large one past readable
    // labels: then it scrolls, and the selected node (or the best) stays in sight.
    const double s = std::clamp(transform().m11(), kMinScale, 1.0);
    if (s != transform().m11()) {
        setTransform(QTransform::fromScale(s, s));
        const std::int64_t focus = selectedNode() ? selectedNode() : m_snapshot ? m_snapshot->bestNode : 0;
        if (QGraphicsItem *item = m_items.value(focus))
            centerOn(item);
    }
}

void GraphView::wheelEvent(QWheelEvent *e)
{
    m_autoFit = false;
    const double factor = std::pow(1.0015, e->angleDelta().y());
    scale(factor, factor);
    e->accept();
}

} // namespace kf::ui
