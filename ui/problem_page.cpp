#include "problem_page.h"

#include "cuda_editor.h"
#include "domain/gpu_facts.h"
#include "gpu/datasheet.h"
#include "model/floors.h"
#include "model/format.h"
#include "model/roles.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QStackedWidget>
#include <QTableView>
#include <QVBoxLayout>

namespace kf::ui {

ProblemPage::ProblemPage(QWidget *parent) : QWidget(parent)
{
    m_model = new ProblemModel(this);
    m_proxy = new QSortFilterProxyModel(this);
    m_proxy->setSourceModel(m_model);
    m_proxy->setSortRole(SortRole);
    m_view = new QTableView(this);
    m_view->setObjectName(QStringLiteral("problemList"));
    m_view->setModel(m_proxy);
    m_view->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_view->setSelectionMode(QAbstractItemView::SingleSelection);
    m_view->setSortingEnabled(true);
    m_view->sortByColumn(ProblemModel::NameColumn, Qt::AscendingOrder);
    m_view->verticalHeader()->hide();
    // The inputs are in the details beside the list; the list stays narrow enough to read names.
    m_view->setColumnHidden(ProblemModel::InputsColumn, true);
    m_view->horizontalHeader()->setSectionResizeMode(ProblemModel::NameColumn, QHeaderView::Stretch);
    m_view->horizontalHeader()->setSectionResizeMode(ProblemModel::FlopsColumn, QHeaderView::ResizeToContents);
    m_view->horizontalHeader()->setSectionResizeMode(ProblemModel::BytesColumn, QHeaderView::ResizeToContents);
    m_view->setAlternatingRowColors(true);

    auto *add = new QPushButton(tr("Add folder…"), this);
    add->setToolTip(tr("Show the problem files (*.toml) of another folder too"));
    auto *create = new QPushButton(tr("New session…"), this);
    create->setToolTip(tr("Start a session for the selected problem"));
    m_errors = new QLabel(this);
    m_errors->setWordWrap(true);
    m_errors->setStyleSheet(QStringLiteral("color: #b00020"));
    m_errors->hide();

    // Where nothing was found: where the app looked, and how to add a folder.
    m_empty = new QLabel(this);
    m_empty->setObjectName(QStringLiteral("problemsEmpty"));
    m_empty->setWordWrap(true);
    m_empty->setAlignment(Qt::AlignTop | Qt::AlignLeft);
    m_empty->setMargin(12);
    m_empty->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_listPages = new QStackedWidget(this);
    m_listPages->addWidget(m_view);
    m_listPages->addWidget(m_empty);

    auto *left = new QWidget(this);
    auto *ll = new QVBoxLayout(left);
    ll->setContentsMargins(0, 0, 0, 0);
    ll->addWidget(m_listPages, 1);
    ll->addWidget(m_errors);
    auto *buttons = new QHBoxLayout;
    buttons->addWidget(add);
    buttons->addStretch();
    buttons->addWidget(create);
    ll->addLayout(buttons);

    m_title = new QLabel(this);
    m_title->setStyleSheet(QStringLiteral("font-size: 15px; font-weight: 600"));
    m_details = new QLabel(this);
    m_details->setWordWrap(true);
    m_details->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_gpu = new QComboBox(this);
    m_gpu->setToolTip(tr("The GPU whose datasheet rates give the roofline floor"));
    for (const std::string &name : gpu::datasheetNames())
        m_gpu->addItem(qs(name));
    m_floor = new QLabel(this);
    m_floor->setObjectName(QStringLiteral("problemFloor"));
    m_floor->setWordWrap(true);
    m_floor->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_reference = makeEditor(EditorKind::Python, this);
    m_reference->setObjectName(QStringLiteral("referenceSource"));

    auto *right = new QWidget(this);
    auto *rl = new QVBoxLayout(right);
    rl->setContentsMargins(0, 0, 0, 0);
    rl->addWidget(m_title);
    rl->addWidget(m_details);
    auto *floorRow = new QHBoxLayout;
    floorRow->addWidget(new QLabel(tr("Roofline floor on"), this));
    floorRow->addWidget(m_gpu);
    floorRow->addStretch();
    rl->addLayout(floorRow);
    rl->addWidget(m_floor);
    rl->addWidget(new QLabel(tr("Reference (TorchScript):"), this));
    rl->addWidget(m_reference, 1);

    auto *split = new QSplitter(this);
    split->addWidget(left);
    split->addWidget(right);
    split->setStretchFactor(0, 2);
    split->setStretchFactor(1, 3);
    auto *l = new QVBoxLayout(this);
    l->setContentsMargins(4, 4, 4, 4);
    l->addWidget(split);

    connect(m_view->selectionModel(), &QItemSelectionModel::currentRowChanged, this, &ProblemPage::showCurrent);
    connect(m_gpu, &QComboBox::currentIndexChanged, this, &ProblemPage::showCurrent);
    connect(add, &QPushButton::clicked, this, &ProblemPage::addFolderRequested);
    connect(create, &QPushButton::clicked, this, [this] {
        if (const Problem *p = currentProblem())
            emit newSessionRequested(qs(p->name));
    });
    connect(m_view, &QTableView::doubleClicked, create, &QPushButton::click);
}

void ProblemPage::setProblems(const ProblemListPtr &list)
{
    const QString current = currentProblem() ? qs(currentProblem()->name) : QString();
    m_model->setProblems(list);
    QStringList errors;
    if (list)
        for (const Error &e : list->errors)
            errors << qs(e.text());
    m_errors->setText(errors.isEmpty() ? QString()
                                       : tr("Problem files with errors:\n%1").arg(errors.join(QLatin1Char('\n'))));
    m_errors->setVisible(!errors.isEmpty());
    const bool none = !list || list->problems.empty();
    if (none) {
        QStringList looked;
        if (list)
            for (const std::string &dir : list->searched)
                looked << QStringLiteral("<li><tt>%1</tt></li>").arg(qs(dir).toHtmlEscaped());
        m_empty->setText(tr("<p><b>No problem files found.</b></p><p>KernelForge looks for the problems it ships "
                            "with next to its installed data and in the source tree it was built from:</p><ul>%1</ul>"
                            "<p>Press <b>Add folder…</b> below to show the problem files (<tt>*.toml</tt>) of a folder "
                            "of your own, or set <tt>KERNELFORGE_PROBLEMS</tt> to the folder of the shipped ones.</p>")
                             .arg(looked.isEmpty() ? tr("<li>(no such folder exists)</li>") : looked.join(QString())));
    }
    m_listPages->setCurrentWidget(none ? static_cast<QWidget *>(m_empty) : m_view);
    if (current.isEmpty() || !selectProblem(current))
        m_view->selectRow(0);
    showCurrent();
}

void ProblemPage::setLocalGpu(const QString &name)
{
    for (int i = 0; i < m_gpu->count(); ++i)
        if (name.contains(m_gpu->itemText(i))) {
            m_gpu->setCurrentIndex(i);
            return;
        }
}

const Problem *ProblemPage::currentProblem() const
{
    const QModelIndex i = m_view->currentIndex();
    return i.isValid() ? m_model->problemAt(m_proxy->mapToSource(i).row()) : nullptr;
}

bool ProblemPage::selectProblem(const QString &name)
{
    const int row = m_model->rowOf(name);
    if (row < 0)
        return false;
    m_view->setCurrentIndex(m_proxy->mapFromSource(m_model->index(row, 0)));
    return true;
}

QString ProblemPage::referenceText() const { return m_reference->text(); }
bool ProblemPage::showsEmptyState() const { return m_listPages->currentWidget() == m_empty; }
QString ProblemPage::floorText() const { return m_floor->text(); }

void ProblemPage::setSessionFloors(const QString &problem, const QString &text)
{
    if (problem == m_sessionProblem && text == m_sessionFloors)
        return;
    m_sessionProblem = problem;
    m_sessionFloors = text;
    showCurrent();
}

void ProblemPage::showCurrent()
{
    const Problem *p = currentProblem();
    if (!p) {
        m_title->setText(tr("No problem selected"));
        m_details->clear();
        m_floor->clear();
        m_reference->clear();
        return;
    }
    m_title->setText(qs(p->name));
    QString html = QStringLiteral("<p>%1</p><table cellspacing=4>").arg(qs(p->description).toHtmlEscaped());
    auto row = [&](const QString &kind, const TensorSpec &t, const QString &extra) {
        html += QStringLiteral("<tr><td><i>%1</i></td><td><b>%2</b></td><td>%3</td><td>%4</td><td>%5</td></tr>")
                    .arg(kind, qs(t.name), formatShape(t.shape), qs(toString(t.dtype)), extra);
    };
    for (const InputSpec &t : p->inputs)
        row(tr("input"), t, {});
    for (const ParamSpec &t : p->params)
        row(tr("parameter"), t, qs(t.init));
    for (const TensorSpec &t : p->outputs)
        row(tr("output"), t, {});
    html += QStringLiteral("</table><p>FLOPs: <b>%1</b>%2 &nbsp; bytes: <b>%3</b> &nbsp; tolerance: <b>%4</b></p>")
                .arg(p->flops ? formatCount(*p->flops) : tr("derived from the op graph by the worker"),
                     p->flops ? QString() : QString(), formatBytes(p->bytes()), qs(toString(p->policy)));
    m_details->setText(html);

    // The datasheet's floor at each precision, and the one the open session measured for this
    // problem, each labelled: they differ by the rates they come from.
    const Ceilings c = datasheetCeilings(m_gpu->currentText().toStdString());
    QString floor = tr("<b>Datasheet rates</b> (%1): %2")
                        .arg(describeCeilings(c), describeFloors(p->flops.value_or(0), p->bytes(), c));
    if (!p->flops)
        floor += tr("<br><i>The FLOPs are derived by the worker, so this floor counts the memory traffic only.</i>");
    if (!m_sessionFloors.isEmpty() && m_sessionProblem == qs(p->name))
        floor += tr("<br><b>%1</b> — the open session judged its kernels against these.")
                     .arg(m_sessionFloors.toHtmlEscaped());
    m_floor->setText(floor);
    m_reference->setReadOnly(false);
    m_reference->setText(qs(p->referenceSource));
    m_reference->setReadOnly(true);
}

} // namespace kf::ui
