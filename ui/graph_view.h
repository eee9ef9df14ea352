#pragma once
// The search tree as a graph: nodes left to right by depth (rounds, ideas, candidates, repairs and
// hand edits), coloured by status, with the speedup and parameters on each candidate, edges from
// parent to child and the path to the best kernel drawn thick. A node's children are drawn only
// while it is expanded; the window keeps that in step with the outline, so both show the same
// part of the tree. Zoom with the wheel or Ctrl +/-, pan by dragging; double-click a node or click
// its +/− handle to expand or collapse it.
#include "model/session_snapshot.h"

#include <QGraphicsView>
#include <QHash>
#include <QSet>

namespace kf::ui {

class GraphView : public QGraphicsView {
    Q_OBJECT
public:
    // "Fit" never shrinks labels below this share of their size (about 9 px high): past it, the
    // view scrolls and keeps the selected node in sight instead.
    static constexpr double kMinScale = 0.8;

    explicit GraphView(QWidget *parent = nullptr);

    void setSnapshot(const SnapshotPtr &);
    // 0 clears. A node inside a collapsed one is revealed (its ancestors expand); it is centred
    // when it is off screen.
    void selectNode(std::int64_t node);
    std::int64_t selectedNode() const;
    int nodeCount() const { return int(m_items.size()); } // nodes drawn
    bool isShown(std::int64_t node) const { return m_items.contains(node); }
    QPointF nodePosition(std::int64_t node) const; // scene position of a node's item (tests)
    bool isOnBestPath(std::int64_t node) const;
    QString toolTipOf(std::int64_t node) const; // "" when it is not drawn
    double zoom() const { return transform().m11(); }

    // Which nodes show their children. The session's root always does.
    void setExpandedNodes(const QSet<qint64> &);
    const QSet<qint64> &expandedNodes() const { return m_expanded; }
    bool isExpanded(std::int64_t node) const;

public slots:
    void zoomIn();
    void zoomOut();
    void fit();

signals:
    void nodeSelected(std::int64_t node);
    // The user asked to expand or collapse a node (double click, or its handle).
    void expansionRequested(std::int64_t node, bool expand);

protected:
    void wheelEvent(QWheelEvent *) override;
    void resizeEvent(QResizeEvent *) override;
    void mousePressEvent(QMouseEvent *) override;
    void mouseDoubleClickEvent(QMouseEvent *) override;

private:
    void rebuild();
    bool hasChildren(std::int64_t node) const;
    std::int64_t nodeAtView(const QPoint &, bool *onHandle = nullptr) const;

    SnapshotPtr m_snapshot;
    QHash<qint64, QGraphicsItem *> m_items;
    QSet<qint64> m_expanded;
    bool m_selecting = false;
    bool m_autoFit = true; // fit on resize and new sessions until the user zooms
};

} // namespace kf::ui
