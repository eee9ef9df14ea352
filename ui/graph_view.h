#pragma once
// The search tree as a graph: nodes left to right by depth (rounds, ideas, candidates, repairs and
// hand edits), coloured by status, with the speedup on each candidate, edges from parent to child
// and the path to the best kernel drawn thick. Zoom with the wheel or Ctrl +/-, pan by dragging.
// It reads the outline model's snapshot and selects by node id, so it stays linked with the outline.
#include "model/session_snapshot.h"

#include <QGraphicsView>
#include <QHash>

namespace kf::ui {

class GraphView : public QGraphicsView {
    Q_OBJECT
public:
    explicit GraphView(QWidget *parent = nullptr);

    void setSnapshot(const SnapshotPtr &);
    void selectNode(std::int64_t node); // 0 clears; centres the node when it is off screen
    std::int64_t selectedNode() const;
    int nodeCount() const { return int(m_items.size()); }
    QPointF nodePosition(std::int64_t node) const; // scene position of a node's item (tests)
    bool isOnBestPath(std::int64_t node) const;

public slots:
    void zoomIn();
    void zoomOut();
    void fit();

signals:
    void nodeSelected(std::int64_t node);

protected:
    void wheelEvent(QWheelEvent *) override;
    void resizeEvent(QResizeEvent *) override;

private:
    void rebuild();

    SnapshotPtr m_snapshot;
    QHash<qint64, QGraphicsItem *> m_items;
    bool m_selecting = false;
    bool m_autoFit = true; // fit on resize and new sessions until the user zooms
};

} // namespace kf::ui
