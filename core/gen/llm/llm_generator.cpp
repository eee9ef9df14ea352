#include "gen/llm/llm_generator.h"

#include "gen/llm/parse.h"
#include "gen/llm/url.h"

#include <algorithm>
#include <cctype>
#include <set>

namespace kf::llm {

namespace {

// Kernels are shown whole up to this many characters; longer ones are cut in the middle.
constexpr std::size_t kMaxKernelChars = 12000;

// A stable idea id from its title: the search never repeats an id on the same parent, so two
// wordings that differ only in case or punctuation count as one idea.
std::string ideaId(const std::string &title)
{
    std::string id;
    bool space = false;
    for (unsigned char c : title) {
        if (std::isalnum(c)) {
            if (space && !id.empty())
                id += '-';
            id += char(std::tolower(c));
            space = false;
        } else {
            space = true;
        }
    }
    return id.empty() ? "idea" : id;
}

bool hosted(const std::string &host) { return host == "api.openai.com" || host == "api.anthropic.com"; }

// A model's refusal is quoted in messages and logs, briefly.
std::string clip(std::string text)
{
    constexpr std::size_t kMax = 300;
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())))
        text.pop_back();
    return text.size() > kMax ? text.substr(0, kMax) + "..." : text;
}

} // namespace

LlmGenerator::LlmGenerator(LlmConfig c, PriceTable p)
    : m_config(std::move(c)), m_prices(std::move(p)), m_backend(makeBackend(m_config))
{
}

Result<std::shared_ptr<LlmGenerator>> LlmGenerator::make(Protocol protocol, const nlohmann::json &settings)
{
    auto config = configFromJson(protocol, settings);
    if (!config)
        return config.error();
    // Hosted APIs always want a key: say so now, before a search starts its workers and measures
    // a baseline, rather than after the first request.
    const std::string host = hostOf(config->baseUrl);
    if (hosted(host) && config->key().empty()) {
        std::string how = "name the variable that holds it (setting key_env)";
        if (!config->keyEnv.empty())
            how = "set " + config->keyEnv + ", or " + how;
        return makeError(ErrorCode::Settings, "no API key for " + host + ": " + how);
    }
    auto prices = loadPriceTable(config->prices);
    if (!prices)
        return prices.error();
    return std::shared_ptr<LlmGenerator>(new LlmGenerator(std::move(*config), std::move(*prices)));
}

Status LlmGenerator::supports(const GenContext &ctx) const
{
    // A language model can attempt any op; what can fail early is a missing or broken template.
    if (auto p = prompt("ideas", ideaValues(ctx, 1)); !p)
        return p.error();
    return Ok{};
}

PromptValues LlmGenerator::ideaValues(const GenContext &ctx, int count) const
{
    PromptValues v = common(ctx);
    v["COUNT"] = std::to_string(count);
    v["BEST"] = kernelList(ctx, ctx.topK, kMaxKernelChars);
    std::vector<KernelRecord> others; // bank kernels not already shown among the best
    for (const auto &k : ctx.bank)
        if (std::none_of(ctx.topK.begin(), ctx.topK.end(), [&](const KernelRecord &t) { return t.node == k.node; }))
            others.push_back(k);
    v["BANK"] =
        others.empty() ? std::string("None besides the kernels above.\n") : kernelList(ctx, others, kMaxKernelChars);
    v["TRIED"] = triedIdeas(ctx);
    return v;
}

PromptValues LlmGenerator::common(const GenContext &ctx) const
{
    return {{"PROBLEM", problemFacts(ctx)}, {"GPU", gpuFacts(ctx)}, {"ROUND", std::to_string(ctx.round)}};
}

Result<Prompt> LlmGenerator::prompt(const std::string &name, const PromptValues &values) const
{
    auto format = renderPrompt("format", values, m_config.prompts);
    if (!format)
        return format.error();
    PromptValues withFormat = values;
    withFormat["FORMAT"] = *format;
    auto system = renderPrompt("system", withFormat, m_config.prompts);
    if (!system)
        return system.error();
    auto user = renderPrompt(name, withFormat, m_config.prompts);
    if (!user)
        return user.error();
    return Prompt{*system, *user};
}

std::vector<std::string> LlmGenerator::ask(const GenContext &ctx, const std::vector<Job> &jobs, const Check &check,
                                           Usage *usage, std::vector<std::int64_t> *exchangeIds) const
{
    std::vector<std::string> errors(jobs.size());
    if (exchangeIds)
        exchangeIds->assign(jobs.size(), 0);
    std::vector<HttpRequest> requests;
    for (const Job &j : jobs)
        requests.push_back(m_backend->request(j.prompt));
    const std::vector<std::string> secrets = m_config.secrets();

    runRequests(requests, m_config.http, ctx.cancel, [&](std::size_t i, HttpResult r) {
        Exchange e;
        e.purpose = jobs[i].purpose;
        e.node = jobs[i].node;
        e.model = m_config.model;
        e.endpoint = publicUrl(requests[i].url);
        e.request = requests[i].body; // the key travels only in a header, never in the body
        e.prompt = jobs[i].prompt.user;
        // A stream is kept as the one document it stands for, not as its thousands of events.
        const std::string body = r.ok() ? m_backend->answerBody(r) : r.body;
        e.response = scrub(body, secrets);
        e.httpStatus = r.status;
        e.attempts = r.attempts;
        e.latencyMs = r.latencyMs;
        std::string error;
        if (!r.ok()) {
            error = scrub(describeFailure(r, requests[i].url, m_config.http), secrets);
        } else if (auto reply = m_backend->parse(body); !reply) {
            error = scrub(reply.error().text(), secrets);
        } else {
            Reply scrubbed = *reply;
            scrubbed.text = scrub(reply->text, secrets);
            e.answer = scrubbed.text;
            e.reasoning = scrub(reply->reasoning, secrets);
            e.stopReason = reply->stopReason;
            e.ending = toString(reply->ending);
            e.usage = reply->usage;
            e.usage.cost = m_prices.cost(m_config.model, reply->usage);
            if (usage)
                *usage += e.usage;
            // A refusal is no answer to read; the stored exchange says whether its answer was
            // used, so it is recorded after the check.
            if (reply->ending == Ending::Refused)
                error = "refused: " + clip(scrub(reply->refusal, secrets));
            else
                error = check(i, scrubbed);
        }
        e.error = error;
        errors[i] = r.cancelled ? std::string("cancelled") : error;
        if (r.cancelled && r.attempts == 0)
            return; // never sent: nothing to keep
        const std::int64_t id = ctx.record ? ctx.record(e) : 0;
        if (exchangeIds)
            (*exchangeIds)[i] = id;
    });
    return errors;
}

Result<std::vector<Idea>> LlmGenerator::proposeIdeas(const GenContext &ctx, int count, Usage *usage)
{
    auto p = prompt("ideas", ideaValues(ctx, count));
    if (!p)
        return p.error();

    std::set<std::int64_t> known;
    for (const auto &k : ctx.topK)
        known.insert(k.node);
    for (const auto &k : ctx.bank)
        known.insert(k.node);
    const std::int64_t best = ctx.topK.empty() ? 0 : ctx.topK.front().node;

    std::vector<ParsedIdea> parsed;
    std::vector<std::int64_t> ids;
    auto errors = ask(
        ctx, {Job{"ideas", 0, *p}},
        [&](std::size_t, const Reply &reply) -> std::string {
            auto ideas = parseIdeas(reply.text, reply.truncated());
            if (!ideas)
                return ideas.error().message;
            parsed = std::move(*ideas);
            return {};
        },
        usage, &ids);
    if (!errors[0].empty())
        return makeError(errors[0] == "cancelled" ? ErrorCode::Cancelled : ErrorCode::Llm, errors[0]);

    std::vector<Idea> out;
    for (const ParsedIdea &pi : parsed) {
        Idea idea;
        idea.title = pi.title;
        idea.id = ideaId(pi.title);
        idea.text = pi.description.empty() ? pi.title : pi.description;
        idea.why = pi.rationale;
        if (!pi.expectedGain.empty())
            idea.why += (idea.why.empty() ? "" : " ") + std::string("Expected gain: ") + pi.expectedGain + ".";
        // A kernel the model names must be one it was shown; otherwise it builds on the best.
        idea.parentNode = pi.buildsOn >= 0 && (pi.buildsOn == 0 || known.count(pi.buildsOn)) ? pi.buildsOn : best;
        idea.params = {{"expected_gain", pi.expectedGain}, {"model", m_config.model}};
        idea.exchange = ids[0];
        out.push_back(std::move(idea));
    }
    return out;
}

std::vector<KernelRecord> LlmGenerator::parentsOf(const GenContext &ctx, const Idea &idea) const
{
    std::vector<KernelRecord> out;
    auto add = [&](const KernelRecord &k) {
        if (std::none_of(out.begin(), out.end(), [&](const KernelRecord &o) { return o.node == k.node; }))
            out.push_back(k);
    };
    for (const auto *list : {&ctx.topK, &ctx.bank})
        for (const auto &k : *list)
            if (k.node == idea.parentNode)
                add(k);
    if (!ctx.topK.empty()) // the best so far, as the bar to beat
        add(ctx.topK.front());
    return out;
}

std::vector<Result<std::vector<Draft>>>
LlmGenerator::implementAll(const GenContext &ctx, const std::vector<Idea> &ideas, int count, Usage *usage)
{
    std::vector<Result<std::vector<Draft>>> out;
    std::vector<Job> jobs;
    std::vector<std::size_t> ideaOf;
    std::vector<std::optional<Error>> broken(ideas.size());
    for (std::size_t i = 0; i < ideas.size(); ++i) {
        const Idea &idea = ideas[i];
        PromptValues v = common(ctx);
        v["IDEA_TITLE"] = idea.title;
        v["IDEA_TEXT"] = idea.text;
        v["IDEA_WHY"] = idea.why.empty() ? std::string("(not given)") : idea.why;
        const auto parents = parentsOf(ctx, idea);
        v["PARENTS"] = parents.empty() ? std::string("None: write it from the reference.\n")
                                       : kernelList(ctx, parents, kMaxKernelChars);
        v["BUILDS_ON"] = idea.parentNode ? "kernel #" + std::to_string(idea.parentNode) : std::string("the reference");
        v["VARIANTS"] = std::to_string(count);
        for (int k = 1; k <= count; ++k) {
            v["VARIANT"] = std::to_string(k);
            auto p = prompt("implement", v);
            if (!p) {
                broken[i] = p.error();
                break;
            }
            jobs.push_back(Job{"implement", idea.node, *p});
            ideaOf.push_back(i);
        }
    }
    std::vector<std::vector<Draft>> drafts(ideas.size());
    std::vector<std::int64_t> ids;
    std::vector<std::string> sources(jobs.size());
    auto errors = ask(
        ctx, jobs,
        [&](std::size_t j, const Reply &reply) -> std::string {
            auto code = extractCandidate(reply.text, reply.truncated());
            if (!code)
                return code.error().message;
            sources[j] = *code;
            return {};
        },
        usage, &ids);
    std::vector<std::string> firstError(ideas.size());
    std::vector<int> variant(ideas.size(), 0);
    for (std::size_t j = 0; j < jobs.size(); ++j) {
        const std::size_t i = ideaOf[j];
        ++variant[i];
        if (!errors[j].empty()) {
            if (firstError[i].empty())
                firstError[i] = errors[j];
            continue;
        }
        Draft d;
        d.title = ideas[i].title + ", variant " + std::to_string(variant[i]);
        d.source = sources[j];
        d.params = {{"variant", variant[i]}, {"model", m_config.model}};
        d.exchange = ids[j];
        drafts[i].push_back(std::move(d));
    }
    for (std::size_t i = 0; i < ideas.size(); ++i) {
        if (broken[i])
            out.emplace_back(*broken[i]);
        else if (!drafts[i].empty() || firstError[i].empty())
            out.emplace_back(std::move(drafts[i]));
        else
            out.emplace_back(makeError(firstError[i] == "cancelled" ? ErrorCode::Cancelled : ErrorCode::Llm,
                                       "no usable implementation from " + std::to_string(count) +
                                           (count == 1 ? " request: " : " requests, the first failure: ") +
                                           firstError[i]));
    }
    return out;
}

Result<std::vector<Draft>> LlmGenerator::implement(const GenContext &ctx, const Idea &idea, int count, Usage *usage)
{
    return std::move(implementAll(ctx, {idea}, count, usage).front());
}

std::vector<Result<std::optional<Draft>>> LlmGenerator::repairAll(const GenContext &ctx,
                                                                  const std::vector<RepairJob> &repairs, Usage *usage)
{
    std::vector<Result<std::optional<Draft>>> out;
    std::vector<Job> jobs;
    std::vector<std::optional<Error>> broken(repairs.size());
    std::vector<std::size_t> jobOf(repairs.size(), std::size_t(-1));
    for (std::size_t i = 0; i < repairs.size(); ++i) {
        const RepairJob &r = repairs[i];
        PromptValues v = common(ctx);
        v["IDEA_TITLE"] = r.idea.title;
        v["IDEA_TEXT"] = r.idea.text;
        v["SOURCE"] = r.failed.source;
        v["FAILURE"] = failureFacts(r.failed);
        auto p = prompt("repair", v);
        if (!p) {
            broken[i] = p.error();
            continue;
        }
        jobOf[i] = jobs.size();
        jobs.push_back(Job{"repair", r.failed.node, *p});
    }
    std::vector<std::string> sources(jobs.size());
    std::vector<std::int64_t> ids;
    auto errors = ask(
        ctx, jobs,
        [&](std::size_t j, const Reply &reply) -> std::string {
            auto code = extractCandidate(reply.text, reply.truncated());
            if (!code)
                return code.error().message;
            sources[j] = *code;
            return {};
        },
        usage, &ids);
    for (std::size_t i = 0; i < repairs.size(); ++i) {
        if (broken[i]) {
            out.emplace_back(*broken[i]);
            continue;
        }
        const std::size_t j = jobOf[i];
        if (!errors[j].empty()) {
            out.emplace_back(makeError(errors[j] == "cancelled" ? ErrorCode::Cancelled : ErrorCode::Llm, errors[j]));
            continue;
        }
        Draft d;
        d.source = sources[j];
        d.params = {{"model", m_config.model}};
        d.exchange = ids[j];
        out.emplace_back(std::optional<Draft>(std::move(d)));
    }
    return out;
}

Result<std::optional<Draft>> LlmGenerator::repair(const GenContext &ctx, const Idea &idea, const KernelRecord &failed,
                                                  Usage *usage)
{
    return std::move(repairAll(ctx, {RepairJob{idea, failed}}, usage).front());
}

Result<std::vector<std::string>> LlmGenerator::listModels(const std::atomic<bool> *cancel) const
{
    const HttpRequest req = m_backend->modelsRequest();
    HttpResult result;
    runRequests({req}, m_config.http, cancel, [&](std::size_t, HttpResult r) { result = std::move(r); });
    if (!result.ok())
        return makeError(ErrorCode::Llm, scrub(describeFailure(result, req.url, m_config.http), m_config.secrets()));
    return m_backend->parseModels(result.body);
}

} // namespace kf::llm
