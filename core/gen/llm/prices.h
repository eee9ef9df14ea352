#pragma once
// What a model's tokens cost: a table the user can edit (resources/llm/prices.json, or a file of
// their own), prices per million tokens. A model missing from it costs 0, which the generator
// says once, so a cost budget is never trusted silently.
#include "gen/generator.h"
#include "util/error.h"

#include <map>
#include <optional>
#include <string>

namespace kf::llm {

struct Price {
    double input = 0;  // per million prompt tokens
    double output = 0; // per million completion tokens (reasoning included)
};

struct PriceTable {
    std::string currency = "USD";
    std::map<std::string, Price> models;
    std::string source; // the file it came from

    // The model's price: its own entry, else the longest entry that begins its name
    // ("gpt-4.1-2025-04-14" costs what "gpt-4.1" does).
    std::optional<Price> find(const std::string &model) const;
    double cost(const std::string &model, const Usage &) const;
};

Result<PriceTable> parsePriceTable(const std::string &json, const std::string &source);
// `path` when given, else prices.json from $KERNELFORGE_PRICES, the installed llm/ folder or the
// source tree.
Result<PriceTable> loadPriceTable(const std::string &path = {});

} // namespace kf::llm
