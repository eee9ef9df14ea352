#pragma once
// Filtering and sorting of the outline: show candidates of one status group (rounds and ideas
// stay when something below them is shown), match a text in names, and sort by any column's
// SortRole (speedup numerically, unknown times last).
#include "model/status_style.h"

#include <QSortFilterProxyModel>

#include <optional>

namespace kf::ui {

class OutlineFilter : public QSortFilterProxyModel {
    Q_OBJECT
public:
    enum class Show { All, Correct, Failed, Pending, HandEdited };
    explicit OutlineFilter(QObject *parent = nullptr);

    void setShow(Show);
    Show show() const { return m_show; }
    void setText(const QString &);

protected:
    bool filterAcceptsRow(int sourceRow, const QModelIndex &sourceParent) const override;

private:
    bool candidateMatches(const QModelIndex &) const;
    Show m_show = Show::All;
    QString m_text;
};

} // namespace kf::ui
