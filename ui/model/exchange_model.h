#pragma once
// The language-model exchanges behind one node of a session (SessionStore::exchanges): the
// answer that proposed an idea, the draft that became a candidate, the requests that failed for
// an idea. One row per exchange; the candidate pane shows the selected row's prompt and answer.
#include "store/session_store.h"

#include <QAbstractTableModel>
#include <QMetaType>
#include <QString>

#include <memory>
#include <vector>

namespace kf::ui {

// One reading of a node's exchanges, made off the GUI thread.
struct NodeExchanges {
    std::string path; // the session file
    std::int64_t node = 0;
    std::vector<ExchangeRecord> records; // by id
    std::string error;                   // why they could not be read ("" when they were)
};
using ExchangesPtr = std::shared_ptr<const NodeExchanges>;

// Reads through a read-only connection, like readSnapshot().
ExchangesPtr readExchanges(const std::string &path, std::int64_t node);

// The exchange as text for people: a header with model, tokens, cost and how the answer ended,
// then the prompt, any visible thinking, and the answer (the raw response when there is no answer text).
QString exchangeText(const ExchangeRecord &);

// Why the model stopped, for the Stop column: the server's words, and what they mean where the
// answer did not end in full ("length · cut off", "refusal · refused"); "" for no answer.
QString stopText(const ExchangeRecord &);

class ExchangeModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column {
        IdColumn,
        PurposeColumn,
        ModelColumn,
        PromptTokensColumn,
        CompletionTokensColumn,
        CostColumn,
        LatencyColumn,
        StopColumn,
        OutcomeColumn,
        ColumnCount
    };
    explicit ExchangeModel(QObject *parent = nullptr);

    void setExchanges(ExchangesPtr);
    const ExchangesPtr &exchanges() const { return m_exchanges; }
    const ExchangeRecord *record(int row) const; // nullptr when out of range

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation, int role = Qt::DisplayRole) const override;

private:
    ExchangesPtr m_exchanges;
};

} // namespace kf::ui

Q_DECLARE_METATYPE(kf::ui::ExchangesPtr)
