#include "gen/llm/prices.h"

#include "gen/llm/resources.h"

#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>

namespace kf::llm {

std::optional<Price> PriceTable::find(const std::string &model) const
{
    if (auto it = models.find(model); it != models.end())
        return it->second;
    std::optional<Price> best;
    std::size_t length = 0;
    for (const auto &[name, price] : models)
        if (name.size() > length && model.compare(0, name.size(), name) == 0) {
            best = price;
            length = name.size();
        }
    return best;
}

double PriceTable::cost(const std::string &model, const Usage &u) const
{
    const auto p = find(model);
    if (!p)
        return 0;
    return (double(u.promptTokens) * p->input + double(u.completionTokens) * p->output) / 1e6;
}

Result<PriceTable> parsePriceTable(const std::string &text, const std::string &source)
{
    auto j = nlohmann::json::parse(text, nullptr, false);
    auto bad = [&](const std::string &what) { return makeError(ErrorCode::Prices, what, source); };
    if (j.is_discarded() || !j.is_object())
        return bad("not a JSON object");
    PriceTable t;
    t.source = source;
    if (auto c = j.find("currency"); c != j.end()) {
        if (!c->is_string())
            return bad("currency must be a string");
        t.currency = c->get<std::string>();
    }
    auto m = j.find("models");
    if (m == j.end() || !m->is_object())
        return bad("\"models\" must be an object of model name -> {\"input\", \"output\"}");
    for (const auto &[name, price] : m->items()) {
        if (!price.is_object() || !price.contains("input") || !price.contains("output") ||
            !price["input"].is_number() || !price["output"].is_number())
            return bad("models." + name + " needs numbers \"input\" and \"output\" (per million tokens)");
        t.models[name] = Price{price["input"].get<double>(), price["output"].get<double>()};
    }
    return t;
}

Result<PriceTable> loadPriceTable(const std::string &path)
{
    if (!path.empty()) {
        std::ifstream in(path, std::ios::binary);
        if (!in)
            return makeError(ErrorCode::Io, "cannot read the price table", path);
        std::stringstream s;
        s << in.rdbuf();
        return parsePriceTable(s.str(), path);
    }
    auto text = readResource("llm", "KERNELFORGE_PRICES", "prices.json");
    if (!text)
        return text.error();
    return parsePriceTable(*text, "prices.json");
}

} // namespace kf::llm
