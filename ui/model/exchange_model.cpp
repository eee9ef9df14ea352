#include "model/exchange_model.h"

#include "model/format.h"
#include "model/roles.h"

#include <QLocale>

namespace kf::ui {

ExchangesPtr readExchanges(const std::string &path, std::int64_t node)
{
    auto out = std::make_shared<NodeExchanges>();
    out->path = path;
    out->node = node;
    auto store = SessionStore::open(path, true);
    if (!store) {
        out->error = store.error().text();
        return out;
    }
    auto records = store->exchanges(node);
    if (!records)
        out->error = records.error().text();
    else
        out->records = std::move(*records);
    return out;
}

namespace {

QString tokens(std::int64_t n) { return QLocale().toString(qlonglong(n)); }

QString cost(double c) { return c > 0 ? QString::number(c, 'f', 4) : QStringLiteral("0"); }

QString section(const QString &title, const std::string &body)
{
    return QStringLiteral("\n=== %1 ===\n%2\n").arg(title, qs(body));
}

} // namespace

QString stopText(const ExchangeRecord &e)
{
    QString t = qs(e.stopReason);
    QString meaning;
    if (e.ending == "truncated")
        meaning = QObject::tr("cut off");
    else if (e.ending == "refused")
        meaning = QObject::tr("refused");
    if (meaning.isEmpty())
        return t;
    return t.isEmpty() ? meaning : QStringLiteral("%1 · %2").arg(t, meaning);
}

QString exchangeText(const ExchangeRecord &e)
{
    QString t = QObject::tr("#%1 %2 · round %3 · %4 · %5\n")
                    .arg(e.id)
                    .arg(qs(e.purpose))
                    .arg(e.round)
                    .arg(qs(e.model), qs(e.endpoint));
    t += QObject::tr("%1 · HTTP %2 · %n attempt(s) · %3 s\n", nullptr, e.attempts)
             .arg(qs(e.time))
             .arg(e.httpStatus)
             .arg(e.latencyMs / 1000.0, 0, 'f', 2);
    t += QObject::tr("tokens: %1 prompt + %2 completion (%3 reasoning) · cost %4\n")
             .arg(tokens(e.promptTokens), tokens(e.completionTokens), tokens(e.reasoningTokens), cost(e.cost));
    if (const QString stop = stopText(e); !stop.isEmpty())
        t += QObject::tr("stopped: %1\n").arg(stop);
    if (!e.error.empty())
        t += QObject::tr("not used: %1\n").arg(qs(e.error));
    t += section(QObject::tr("Prompt"), e.prompt);
    if (!e.reasoning.empty())
        t += section(QObject::tr("Thinking"), e.reasoning);
    // An answer that could not be read keeps only the raw response.
    if (!e.answer.empty() || e.response.empty())
        t += section(QObject::tr("Answer"), e.answer);
    else
        t += section(QObject::tr("Response"), e.response);
    return t;
}

ExchangeModel::ExchangeModel(QObject *parent) : QAbstractTableModel(parent) {}

void ExchangeModel::setExchanges(ExchangesPtr e)
{
    beginResetModel();
    m_exchanges = std::move(e);
    endResetModel();
}

const ExchangeRecord *ExchangeModel::record(int row) const
{
    if (!m_exchanges || row < 0 || row >= int(m_exchanges->records.size()))
        return nullptr;
    return &m_exchanges->records[std::size_t(row)];
}

int ExchangeModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() || !m_exchanges ? 0 : int(m_exchanges->records.size());
}

int ExchangeModel::columnCount(const QModelIndex &parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant ExchangeModel::data(const QModelIndex &index, int role) const
{
    const ExchangeRecord *e = index.isValid() ? record(index.row()) : nullptr;
    if (!e)
        return {};
    const int c = index.column();
    if (role == NodeIdRole)
        return qlonglong(m_exchanges->node);
    if (role == Qt::TextAlignmentRole && c != PurposeColumn && c != ModelColumn && c != StopColumn &&
        c != OutcomeColumn)
        return int(Qt::AlignRight | Qt::AlignVCenter);
    if (role == Qt::ToolTipRole && c == OutcomeColumn)
        return e->error.empty() ? QObject::tr("The answer was used") : qs(e->error);
    if (role == Qt::ToolTipRole && c == StopColumn) {
        if (e->ending == "truncated")
            return QObject::tr("The answer was cut off at the token or context limit");
        if (e->ending == "refused")
            return QObject::tr("The model or the server's content filter refused to answer");
        return e->stopReason.empty() ? QVariant() : QObject::tr("Why the model stopped, as the server said it");
    }
    if (role == SortRole) {
        switch (c) {
        case IdColumn:
            return qlonglong(e->id);
        case PromptTokensColumn:
            return qlonglong(e->promptTokens);
        case CompletionTokensColumn:
            return qlonglong(e->completionTokens);
        case CostColumn:
            return e->cost;
        case LatencyColumn:
            return e->latencyMs;
        default:
            break;
        }
    }
    if (role != Qt::DisplayRole && role != SortRole)
        return {};
    switch (c) {
    case IdColumn:
        return QStringLiteral("#%1").arg(e->id);
    case PurposeColumn:
        return qs(e->purpose);
    case ModelColumn:
        return qs(e->model);
    case PromptTokensColumn:
        return tokens(e->promptTokens);
    case CompletionTokensColumn:
        return tokens(e->completionTokens);
    case CostColumn:
        return cost(e->cost);
    case LatencyColumn:
        return QStringLiteral("%1 s").arg(e->latencyMs / 1000.0, 0, 'f', 1);
    case StopColumn:
        return stopText(*e);
    case OutcomeColumn:
        return e->error.empty() ? QObject::tr("used") : qs(e->error);
    default:
        return {};
    }
}

QVariant ExchangeModel::headerData(int section, Qt::Orientation o, int role) const
{
    if (o != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case IdColumn:
        return tr("Exchange");
    case PurposeColumn:
        return tr("Purpose");
    case ModelColumn:
        return tr("Model");
    case PromptTokensColumn:
        return tr("Prompt tokens");
    case CompletionTokensColumn:
        return tr("Completion tokens");
    case CostColumn:
        return tr("Cost");
    case LatencyColumn:
        return tr("Time");
    case StopColumn:
        return tr("Stop");
    case OutcomeColumn:
        return tr("Outcome");
    default:
        return {};
    }
}

} // namespace kf::ui
