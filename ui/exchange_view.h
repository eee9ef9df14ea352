#pragma once
// The Exchanges tab of the candidate pane: the language-model exchanges behind the selected idea
// or candidate, a table of them above and the selected one's prompt and answer below (read-only,
// monospace, with a find field). A node without exchanges shows a sentence saying why.
#include "model/exchange_model.h"

#include <QWidget>

class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QStackedWidget;
class QTableView;

namespace kf::ui {

class ExchangeView : public QWidget {
    Q_OBJECT
public:
    explicit ExchangeView(QWidget *parent = nullptr);

    // The exchanges of a node; `emptyText` is shown when there are none.
    void setExchanges(const ExchangesPtr &, const QString &emptyText);
    // A sentence instead of exchanges: why there are none, or that they are being read.
    void showMessage(const QString &text);

    ExchangeModel *model() const { return m_model; }
    QTableView *table() const { return m_table; }
    bool showsMessage() const;
    QString message() const; // the sentence shown ("" while exchanges are shown)
    QString text() const;    // the selected exchange as shown
    // Selects the next occurrence of `text` in the exchange, from the top again after the last
    // one; false when there is none.
    bool find(const QString &text);

private:
    void showRow(int row);

    ExchangeModel *m_model;
    QStackedWidget *m_stack;
    QLabel *m_message;
    QTableView *m_table;
    QPlainTextEdit *m_text;
    QLineEdit *m_find;
};

} // namespace kf::ui
