#include "model/trajectory_model.h"

#include "model/format.h"
#include "model/roles.h"

#include <QFont>
#include <QStringList>

#include <map>

namespace kf::ui {

TrajectoryModel::TrajectoryModel(QObject *parent) : QAbstractTableModel(parent) {}

void TrajectoryModel::findRoundBests()
{
    m_roundBest.assign(std::size_t(m_rows), 0);
    if (!m_snapshot)
        return;
    std::map<int, const NodeView *> fastest;
    for (const NodeView &n : m_snapshot->nodes)
        if (n.isCandidate() && n.medianMs > 0) {
            const NodeView *&f = fastest[n.record.round];
            if (!f || n.medianMs < f->medianMs)
                f = &n;
        }
    for (int r = 0; r < m_rows; ++r)
        if (auto it = fastest.find(m_snapshot->trajectory.rows[std::size_t(r)].round); it != fastest.end())
            m_roundBest[std::size_t(r)] = it->second->id();
}

void TrajectoryModel::setSnapshot(SnapshotPtr s)
{
    const int rows = s ? int(s->trajectory.rows.size()) : 0;
    // Rounds only get added while a search runs: insert the new rows, refresh the others.
    if (m_snapshot && s && m_snapshot->path == s->path && rows >= m_rows) {
        const int before = m_rows;
        m_snapshot = std::move(s);
        if (rows > before) {
            beginInsertRows({}, before, rows - 1);
            m_rows = rows;
            findRoundBests();
            endInsertRows();
        }
        findRoundBests();
        if (before > 0)
            emit dataChanged(index(0, 0), index(before - 1, ColumnCount - 1));
        return;
    }
    beginResetModel();
    m_snapshot = std::move(s);
    m_rows = rows;
    findRoundBests();
    endResetModel();
}

int TrajectoryModel::rowCount(const QModelIndex &parent) const { return parent.isValid() ? 0 : m_rows; }
int TrajectoryModel::columnCount(const QModelIndex &parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant TrajectoryModel::data(const QModelIndex &index, int role) const
{
    if (!index.isValid() || !m_snapshot || index.row() >= m_rows)
        return {};
    const TrajectoryRow &r = m_snapshot->trajectory.rows[std::size_t(index.row())];
    const double eager = m_snapshot->trajectory.eagerMs;
    if (role == Qt::DisplayRole || role == SortRole) {
        switch (index.column()) {
        case RoundColumn:
            return r.round;
        case BestMsColumn:
            return r.bestMs;
        case PercentColumn:
            return r.percentOfReference;
        case SpeedupColumn:
            return r.bestMs > 0 && eager > 0 ? eager / r.bestMs : 0.0;
        case IdeaColumn:
            return qs(r.idea);
        case RoundBestColumn:
            return r.roundBestMs;
        case CandidatesColumn:
            return r.candidates;
        case CorrectColumn:
            return r.correct;
        }
    } else if (role == NodeIdRole) {
        const std::int64_t own = m_roundBest[std::size_t(index.row())];
        return qint64(own ? own : r.bestNode);
    } else if (role == Qt::ToolTipRole) {
        // The whole title where the column cuts it short, and what a click selects.
        const std::int64_t own = m_roundBest[std::size_t(index.row())];
        QString tip = index.column() == IdeaColumn && !r.idea.empty() ? qs(r.idea) + QLatin1Char('\n') : QString();
        if (own)
            return tip + tr("Click to select #%1, the fastest correct kernel of round %2").arg(own).arg(r.round);
        if (r.bestNode)
            return tip +
                tr("Round %1 found no correct kernel; click to select #%2, the best so far")
                    .arg(r.round)
                    .arg(r.bestNode);
        return tip.trimmed();
    } else if (role == Qt::FontRole && r.improved && index.column() == BestMsColumn) {
        QFont f;
        f.setBold(true);
        return f;
    } else if (role == Qt::TextAlignmentRole && index.column() != IdeaColumn) {
        return QVariant(Qt::AlignRight | Qt::AlignVCenter);
    }
    return {};
}

QVariant TrajectoryModel::headerData(int section, Qt::Orientation o, int role) const
{
    if (o != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case RoundColumn:
        return tr("Round");
    case BestMsColumn:
        return tr("Best ms");
    case PercentColumn:
        return tr("% of reference");
    case SpeedupColumn:
        return tr("Speedup");
    case IdeaColumn:
        return tr("Idea");
    case RoundBestColumn:
        return tr("Round best ms");
    case CandidatesColumn:
        return tr("Candidates");
    case CorrectColumn:
        return tr("Correct");
    }
    return {};
}

QString TrajectoryModel::toTsv() const
{
    QStringList lines;
    QStringList header;
    for (int c = 0; c < ColumnCount; ++c)
        header << headerData(c, Qt::Horizontal).toString();
    lines << header.join(QLatin1Char('\t'));
    for (int r = 0; r < m_rows; ++r) {
        QStringList cells;
        for (int c = 0; c < ColumnCount; ++c)
            cells << data(index(r, c)).toString().replace(QLatin1Char('\t'), QLatin1Char(' '));
        lines << cells.join(QLatin1Char('\t'));
    }
    return lines.join(QLatin1Char('\n')) + QLatin1Char('\n');
}

} // namespace kf::ui
