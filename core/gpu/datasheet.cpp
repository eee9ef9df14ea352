#include "gpu/datasheet.h"

namespace kf::gpu {

namespace {

struct Row {
    const char *key;
    Datasheet d;
};

const std::vector<Row> &rows()
{
    // Dense rates (no sparsity), TFLOP/s; bandwidth GB/s. SXM parts.
    static const std::vector<Row> table = {
        {"H200", {4800, {{"fp32", 67}, {"tf32", 494}, {"fp16", 989}, {"bf16", 989}}}},
        {"H100", {3350, {{"fp32", 67}, {"tf32", 494}, {"fp16", 989}, {"bf16", 989}}}},
        {"A100", {2039, {{"fp32", 19.5}, {"tf32", 156}, {"fp16", 312}, {"bf16", 312}}}},
        {"L40S", {864, {{"fp32", 91.6}, {"tf32", 183}, {"fp16", 362}, {"bf16", 362}}}},
        {"L4", {300, {{"fp32", 30.3}, {"tf32", 60}, {"fp16", 121}, {"bf16", 121}}}},
        {"RTX 4090", {1008, {{"fp32", 82.6}, {"tf32", 82.6}, {"fp16", 165}, {"bf16", 165}}}},
    };
    return table;
}

} // namespace

Datasheet datasheetFor(const std::string &name)
{
    for (const Row &r : rows())
        if (name.find(r.key) != std::string::npos)
            return r.d;
    return {};
}

std::vector<std::string> datasheetNames()
{
    std::vector<std::string> names;
    for (const Row &r : rows())
        names.push_back(r.key);
    return names;
}

} // namespace kf::gpu
