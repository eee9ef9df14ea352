#include "model/problem_model.h"

#include "model/format.h"
#include "model/roles.h"

#include <QStringList>

#include <algorithm>
#include <set>

namespace kf::ui {

ProblemList collectProblems(const std::vector<std::string> &shippedFolders,
                            const std::vector<std::string> &extraFolders)
{
    ProblemList out;
    out.searched = shippedFolders;
    std::vector<std::string> folders;
    for (const std::string &dir : shippedFolders) {
        ProblemListing l = listProblems(dir);
        if (l.problems.empty() && l.errors.empty())
            continue;
        folders.push_back(dir); // as the CLI: the first folder that holds problems is the one in use
        break;
    }
    folders.insert(folders.end(), extraFolders.begin(), extraFolders.end());
    std::set<std::string> seen;
    for (const std::string &dir : folders) {
        ProblemListing l = listProblems(dir);
        for (Problem &p : l.problems)
            if (seen.insert(p.name).second)
                out.problems.push_back(std::move(p));
        out.errors.insert(out.errors.end(), l.errors.begin(), l.errors.end());
    }
    std::stable_sort(out.problems.begin(), out.problems.end(),
                     [](const Problem &a, const Problem &b) { return a.name < b.name; });
    return out;
}

ProblemModel::ProblemModel(QObject *parent) : QAbstractTableModel(parent) {}

void ProblemModel::setProblems(ProblemListPtr list)
{
    beginResetModel();
    m_list = std::move(list);
    endResetModel();
}

const Problem *ProblemModel::problemAt(int row) const
{
    if (!m_list || row < 0 || row >= int(m_list->problems.size()))
        return nullptr;
    return &m_list->problems[std::size_t(row)];
}

int ProblemModel::rowOf(const QString &name) const
{
    for (int r = 0; r < rowCount(); ++r)
        if (qs(problemAt(r)->name) == name)
            return r;
    return -1;
}

int ProblemModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() || !m_list ? 0 : int(m_list->problems.size());
}

int ProblemModel::columnCount(const QModelIndex &parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant ProblemModel::data(const QModelIndex &index, int role) const
{
    const Problem *p = index.isValid() ? problemAt(index.row()) : nullptr;
    if (!p)
        return {};
    if (role == Qt::DisplayRole) {
        switch (index.column()) {
        case NameColumn:
            return qs(p->name);
        case InputsColumn: {
            QStringList ins;
            for (const InputSpec &t : p->inputs)
                ins << qs(t.name) + formatShape(t.shape);
            return ins.join(QStringLiteral(", "));
        }
        case FlopsColumn:
            return p->flops ? formatCount(*p->flops) : tr("from the graph");
        case BytesColumn:
            return formatBytes(p->bytes());
        }
    } else if (role == Qt::ToolTipRole) {
        return QStringLiteral("%1\n%2").arg(qs(p->description), qs(p->path));
    } else if (role == SortRole) {
        switch (index.column()) {
        case FlopsColumn:
            return p->flops.value_or(0);
        case BytesColumn:
            return p->bytes();
        default:
            return data(index, Qt::DisplayRole);
        }
    } else if (role == Qt::TextAlignmentRole && index.column() >= FlopsColumn) {
        return QVariant(Qt::AlignRight | Qt::AlignVCenter);
    }
    return {};
}

QVariant ProblemModel::headerData(int section, Qt::Orientation o, int role) const
{
    if (o != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case NameColumn:
        return tr("Problem");
    case InputsColumn:
        return tr("Inputs");
    case FlopsColumn:
        return tr("FLOPs");
    case BytesColumn:
        return tr("Bytes");
    }
    return {};
}

} // namespace kf::ui
