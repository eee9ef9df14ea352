#include "exchange_view.h"

#include <QFontDatabase>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QSplitter>
#include <QStackedWidget>
#include <QTableView>
#include <QTextCursor>
#include <QVBoxLayout>

namespace kf::ui {

ExchangeView::ExchangeView(QWidget *parent) : QWidget(parent), m_model(new ExchangeModel(this))
{
    m_message = new QLabel(this);
    m_message->setObjectName(QStringLiteral("exchangeMessage"));
    m_message->setAlignment(Qt::AlignCenter);
    m_message->setWordWrap(true);
    QFont italic = m_message->font();
    italic.setItalic(true); // a note about the node, not content of it
    m_message->setFont(italic);

    m_table = new QTableView(this);
    m_table->setObjectName(QStringLiteral("exchangeTable"));
    m_table->setModel(m_model);
    m_table->verticalHeader()->hide();
    m_table->verticalHeader()->setDefaultSectionSize(22);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setAlternatingRowColors(true);
    m_table->setWordWrap(false);
    QHeaderView *h = m_table->horizontalHeader();
    for (int c = 0; c < ExchangeModel::OutcomeColumn; ++c)
        h->setSectionResizeMode(c, QHeaderView::ResizeToContents);
    h->setStretchLastSection(true); // the outcome: "used" or the reason it was not

    m_text = new QPlainTextEdit(this);
    m_text->setObjectName(QStringLiteral("exchangeText"));
    m_text->setReadOnly(true);
    m_text->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    m_text->setLineWrapMode(QPlainTextEdit::WidgetWidth); // prompts are prose; code wraps too
    m_find = new QLineEdit(this);
    m_find->setObjectName(QStringLiteral("exchangeFind"));
    m_find->setPlaceholderText(tr("Find in the exchange (Enter for the next)"));
    m_find->setClearButtonEnabled(true);

    auto *split = new QSplitter(Qt::Vertical, this);
    split->addWidget(m_table);
    split->addWidget(m_text);
    split->setStretchFactor(0, 1);
    split->setStretchFactor(1, 4);
    split->setChildrenCollapsible(false);
    auto *content = new QWidget(this);
    auto *cl = new QVBoxLayout(content);
    cl->setContentsMargins(0, 0, 0, 0);
    cl->addWidget(m_find);
    cl->addWidget(split, 1);

    m_stack = new QStackedWidget(this);
    m_stack->addWidget(m_message);
    m_stack->addWidget(content);
    auto *l = new QVBoxLayout(this);
    l->setContentsMargins(0, 0, 0, 0);
    l->addWidget(m_stack);

    connect(m_table->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this](const QModelIndex &i) { showRow(i.row()); });
    connect(m_find, &QLineEdit::returnPressed, this, [this] { find(m_find->text()); });
    connect(m_find, &QLineEdit::textEdited, this, [this](const QString &t) {
        // Searching as one types starts from the top, so the first match is found, not the next.
        m_text->moveCursor(QTextCursor::Start);
        find(t);
    });
}

void ExchangeView::setExchanges(const ExchangesPtr &e, const QString &emptyText)
{
    if (!e || e->records.empty()) {
        m_model->setExchanges(nullptr);
        showMessage(emptyText);
        return;
    }
    m_model->setExchanges(e);
    m_stack->setCurrentIndex(1);
    m_table->setCurrentIndex(m_model->index(0, 0));
    showRow(0);
}

void ExchangeView::showMessage(const QString &text)
{
    m_message->setText(text);
    m_stack->setCurrentIndex(0);
}

bool ExchangeView::showsMessage() const { return m_stack->currentIndex() == 0; }
QString ExchangeView::message() const { return showsMessage() ? m_message->text() : QString(); }
QString ExchangeView::text() const { return showsMessage() ? QString() : m_text->toPlainText(); }

void ExchangeView::showRow(int row)
{
    const ExchangeRecord *e = m_model->record(row);
    m_text->setPlainText(e ? exchangeText(*e) : QString());
}

bool ExchangeView::find(const QString &text)
{
    if (text.isEmpty())
        return false;
    if (m_text->find(text))
        return true;
    m_text->moveCursor(QTextCursor::Start);
    return m_text->find(text);
}

} // namespace kf::ui
