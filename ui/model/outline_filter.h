#pragma once
// Filtering and sorting of the outline: show candidates of one status group or of one exact
// status (rounds and ideas stay when something below them is shown), match a text in names and
// parameters, and sort by any column's SortRole (speedup numerically, unknown times last).
#include "model/status_style.h"

#include <QSortFilterProxyModel>

namespace kf::ui {

class OutlineFilter : public QSortFilterProxyModel {
    Q_OBJECT
public:
    // Failed: every verdict that judged a kernel unusable, suspect included. NeedsGpu: compiled,
    // never run. Unchecked: compute-sanitizer could not judge it. Status: exactly `status`.
    enum class Show { All, Correct, Failed, NeedsGpu, Pending, HandEdited, Unchecked, Status };
    explicit OutlineFilter(QObject *parent = nullptr);

    void setShow(Show, const QString &status = {});
    Show show() const { return m_show; }
    void setText(const QString &);

protected:
    bool filterAcceptsRow(int sourceRow, const QModelIndex &sourceParent) const override;

private:
    bool candidateMatches(const QModelIndex &) const;
    Show m_show = Show::All;
    QString m_status, m_text;
};

} // namespace kf::ui
