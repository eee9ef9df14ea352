#include "trajectory_view.h"

#include "model/format.h"
#include "model/roles.h"
#include "model/trajectory_model.h"
#include "search/trajectory.h"

#include <QApplication>
#include <QClipboard>
#include <QEvent>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QPushButton>
#include <QSaveFile>
#include <QStyledItemDelegate>
#include <QTableView>
#include <QVBoxLayout>

#include <algorithm>

namespace kf::ui {

namespace {

// The model keeps numbers (the chart maps them); the table shows them rounded, blank for 0.
class NumberDelegate : public QStyledItemDelegate {
public:
    using QStyledItemDelegate::QStyledItemDelegate;
    QString displayText(const QVariant &v, const QLocale &locale) const override
    {
        if (v.typeId() == QMetaType::Double) {
            const double d = v.toDouble();
            return d == 0 ? QStringLiteral("–") : locale.toString(d, 'f', d < 10 ? 4 : 1);
        }
        return QStyledItemDelegate::displayText(v, locale);
    }
};

} // namespace

TrajectoryView::TrajectoryView(TrajectoryModel *model, QWidget *parent) : QWidget(parent), m_model(model)
{
    m_view = new QTableView(this);
    m_view->setObjectName(QStringLiteral("trajectoryTable"));
    m_view->setModel(model);
    m_view->setItemDelegate(new NumberDelegate(m_view));
    m_view->verticalHeader()->hide();
    QHeaderView *header = m_view->horizontalHeader();
    header->setStretchLastSection(false);
    for (int c = 0; c < TrajectoryModel::ColumnCount; ++c)
        header->setSectionResizeMode(
            c, c == TrajectoryModel::IdeaColumn ? QHeaderView::Interactive : QHeaderView::ResizeToContents);
    // Shown last, so every number stays in view however long the titles are; Copy keeps the
    // model's order.
    header->moveSection(header->visualIndex(TrajectoryModel::IdeaColumn), TrajectoryModel::ColumnCount - 1);
    m_view->setTextElideMode(Qt::ElideRight);
    m_view->setWordWrap(false);
    m_view->setHorizontalScrollMode(QAbstractItemView::ScrollPerPixel);
    // The numbers' widths follow their contents; the idea takes what they leave.
    connect(header, &QHeaderView::sectionResized, this, [this](int section) {
        if (section != TrajectoryModel::IdeaColumn)
            fitIdeaColumn();
    });
    m_view->viewport()->installEventFilter(this);
    m_view->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_view->setAlternatingRowColors(true);
    m_view->setEditTriggers(QAbstractItemView::NoEditTriggers);
    auto *copy = new QPushButton(tr("Copy"), this);
    copy->setToolTip(tr("Copy the table as tab-separated text"));
    auto *csv = new QPushButton(tr("Export CSV…"), this);
    auto *buttons = new QHBoxLayout;
    buttons->addStretch();
    buttons->addWidget(copy);
    buttons->addWidget(csv);
    auto *l = new QVBoxLayout(this);
    l->setContentsMargins(4, 4, 4, 4);
    l->addWidget(m_view, 1);
    l->addLayout(buttons);
    connect(copy, &QPushButton::clicked, this, &TrajectoryView::copy);
    connect(csv, &QPushButton::clicked, this, &TrajectoryView::exportCsv);
    // A click (or the arrow keys) on a row selects that round's fastest kernel everywhere.
    auto select = [this](const QModelIndex &i) {
        if (const qint64 node = i.data(NodeIdRole).toLongLong())
            emit nodeActivated(node);
    };
    connect(m_view, &QTableView::clicked, this, select);
    connect(m_view->selectionModel(), &QItemSelectionModel::currentRowChanged, this, select);
}

bool TrajectoryView::eventFilter(QObject *o, QEvent *e)
{
    if (o == m_view->viewport() && e->type() == QEvent::Resize)
        fitIdeaColumn();
    return QWidget::eventFilter(o, e);
}

void TrajectoryView::fitIdeaColumn()
{
    QHeaderView *h = m_view->horizontalHeader();
    int others = 0;
    for (int c = 0; c < h->count(); ++c)
        if (c != TrajectoryModel::IdeaColumn && !h->isSectionHidden(c))
            others += h->sectionSize(c);
    const int width = std::max(kIdeaMinWidth, m_view->viewport()->width() - others);
    if (h->sectionSize(TrajectoryModel::IdeaColumn) != width)
        h->resizeSection(TrajectoryModel::IdeaColumn, width);
}

void TrajectoryView::copy() { QApplication::clipboard()->setText(m_model->toTsv()); }

bool TrajectoryView::writeCsv(const QString &file, QString *error) const
{
    if (!m_model->snapshot()) {
        if (error)
            *error = tr("no session is open");
        return false;
    }
    QSaveFile f(file);
    const std::string text = trajectoryCsv(m_model->snapshot()->trajectory);
    if (!f.open(QIODevice::WriteOnly) || f.write(text.data(), qint64(text.size())) != qint64(text.size()) ||
        !f.commit()) {
        if (error)
            *error = tr("cannot write %1: %2").arg(file, f.errorString());
        return false;
    }
    return true;
}

void TrajectoryView::exportCsv()
{
    const QString file =
        QFileDialog::getSaveFileName(this, tr("Export trajectory"), QString(), tr("CSV files (*.csv)"));
    if (file.isEmpty())
        return;
    QString error;
    if (writeCsv(file, &error))
        emit message(tr("Wrote %1").arg(file), false);
    else
        emit message(error, true);
}

} // namespace kf::ui
