#include "model/outline_filter.h"

#include "model/outline_model.h"
#include "model/roles.h"

namespace kf::ui {

OutlineFilter::OutlineFilter(QObject *parent) : QSortFilterProxyModel(parent)
{
    // A round or idea stays when one of its candidates matches.
    setRecursiveFilteringEnabled(true);
    setSortRole(SortRole);
    setDynamicSortFilter(true);
}

void OutlineFilter::setShow(Show s, const QString &status)
{
    if (s == m_show && status == m_status)
        return;
    m_show = s;
    m_status = status;
    invalidateRowsFilter();
}

void OutlineFilter::setText(const QString &t)
{
    if (t == m_text)
        return;
    m_text = t;
    invalidateRowsFilter();
}

bool OutlineFilter::candidateMatches(const QModelIndex &i) const
{
    if (!m_text.isEmpty() && !i.data(Qt::DisplayRole).toString().contains(m_text, Qt::CaseInsensitive) &&
        !i.data(ParamsRole).toString().contains(m_text, Qt::CaseInsensitive) &&
        !i.siblingAtColumn(OutlineModel::DetailsColumn).data().toString().contains(m_text, Qt::CaseInsensitive))
        return false;
    const QString status = i.data(StatusRole).toString();
    switch (m_show) {
    case Show::All:
        return true;
    case Show::Correct:
        return statusGroup(status) == StatusGroup::Good;
    case Show::Failed:
        return statusGroup(status) == StatusGroup::Failed || statusGroup(status) == StatusGroup::Suspect;
    case Show::NeedsGpu:
        return statusGroup(status) == StatusGroup::Unjudged;
    case Show::Pending:
        return statusGroup(status) == StatusGroup::Pending;
    case Show::HandEdited:
        return i.data(EditedRole).toBool();
    case Show::Unchecked:
        return i.data(SanitizerUncheckedRole).toBool();
    case Show::Status:
        return status == m_status;
    }
    return true;
}

bool OutlineFilter::filterAcceptsRow(int sourceRow, const QModelIndex &sourceParent) const
{
    const QModelIndex i = sourceModel()->index(sourceRow, 0, sourceParent);
    if (i.data(KindRole).toString() == u"candidate")
        return candidateMatches(i);
    // Rounds and ideas show by themselves only when nothing is filtered; otherwise through a
    // matching candidate below them (recursive filtering).
    return m_show == Show::All && m_text.isEmpty();
}

} // namespace kf::ui
