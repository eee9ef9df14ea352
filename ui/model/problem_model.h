#pragma once
// The problems the workbench knows: the shipped ones and those of folders the user added.
#include "problem/problem.h"

#include <QAbstractTableModel>

#include <memory>
#include <vector>

namespace kf::ui {

struct ProblemList {
    std::vector<Problem> problems;
    std::vector<Error> errors;         // files that did not parse, with file:line
    std::vector<std::string> searched; // the folders looked in for the shipped problems
};
using ProblemListPtr = std::shared_ptr<const ProblemList>;

// Problems of the shipped folder in use (the first of `shippedFolders` that holds any) and of
// each extra folder, sorted by name; a name that appears twice keeps the first.
ProblemList collectProblems(const std::vector<std::string> &shippedFolders,
                            const std::vector<std::string> &extraFolders);

class ProblemModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { NameColumn, InputsColumn, FlopsColumn, BytesColumn, ColumnCount };
    explicit ProblemModel(QObject *parent = nullptr);

    void setProblems(ProblemListPtr);
    const ProblemListPtr &problems() const { return m_list; }
    const Problem *problemAt(int row) const;
    int rowOf(const QString &name) const; // -1 when absent

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation, int role = Qt::DisplayRole) const override;

private:
    ProblemListPtr m_list;
};

} // namespace kf::ui

Q_DECLARE_METATYPE(kf::ui::ProblemListPtr)
