#pragma once
// A generator that plays a script: ideas come from a queue, each with fixed drafts, so a test
// decides what every round tries and (through the fake worker's FAKE_* markers) how each
// candidate fares. It records every context it was given.
#include "gen/generator.h"

#include <algorithm>
#include <chrono>
#include <deque>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace kf::test {

// A candidate file the fake worker reports `ms` for. `marker` goes into a comment, where the fake
// worker finds FAKE_* markers (FAKE_WRONG, FAKE_FAULT, ...) and NVRTC ignores them; `body` is code,
// so "FAKE_COMPILE_ERROR;" fails with the fake compiler and with NVRTC alike.
inline std::string fakeKernel(double ms, const std::string &marker = "", const std::string &body = "")
{
    return "// @launch k grid(1) block(32) args(x, out)\n"
           "extern \"C\" __global__ void k(const float *x, float *out) { " +
        body +
        " }\n"
        "// FAKE_MS=" +
        std::to_string(ms) + " " + marker + "\n";
}

struct ScriptedIdea {
    std::string id, title;
    std::vector<std::string> drafts;
    bool onBest = true;                // parent: the fastest kernel so far (else the reference)
    std::optional<std::string> repair; // offered for any failed draft of this idea
};

class ScriptedGenerator : public Generator {
public:
    explicit ScriptedGenerator(std::vector<ScriptedIdea> ideas) : m_queue(ideas.begin(), ideas.end()) {}

    // Re-proposes the first idea on its first parent at every call, which the search must skip.
    bool repeatFirst = false;
    // Makes every proposal fail, as an LLM generator would when its server is down.
    bool failPropose = false;
    std::optional<Error> unsupported;
    // How long each proposeIdeas() call thinks, in turn (the last one repeats; none: at once), as
    // a language model's answer takes seconds while the GPU waits.
    std::vector<int> thinkMs;

    std::vector<GenContext> contexts;   // every proposeIdeas() context, in order
    std::vector<Idea> proposed;         // every idea handed out
    std::vector<KernelRecord> repaired; // every failure it was asked to repair

    std::string name() const override { return "scripted"; }

    Status supports(const GenContext &) const override
    {
        if (unsupported)
            return *unsupported;
        return Ok{};
    }

    Result<std::vector<Idea>> proposeIdeas(const GenContext &ctx, int count, Usage *usage) override
    {
        if (!thinkMs.empty()) {
            const int ms = thinkMs[std::min(contexts.size(), thinkMs.size() - 1)];
            std::this_thread::sleep_for(std::chrono::milliseconds(ms));
        }
        contexts.push_back(ctx);
        if (failPropose)
            return makeError(ErrorCode::Generator, "the script says no");
        if (usage)
            usage->promptTokens += 10;
        std::vector<Idea> out;
        if (repeatFirst && !proposed.empty())
            out.push_back(proposed.front()); // one more than asked: the search drops it
        const std::size_t limit = out.size() + std::size_t(count);
        const std::int64_t best = ctx.topK.empty() ? 0 : ctx.topK.front().node;
        while (out.size() < limit && !m_queue.empty()) {
            ScriptedIdea s = m_queue.front();
            m_queue.pop_front();
            Idea idea;
            idea.id = s.id;
            idea.title = s.title;
            idea.text = "Try " + s.title + ".";
            idea.why = ctx.topK.empty() ? "nothing is correct yet" : "the best so far is #" + std::to_string(best);
            idea.parentNode = s.onBest ? best : 0;
            m_scripts.push_back({s.id, s});
            proposed.push_back(idea);
            out.push_back(idea);
        }
        return out;
    }

    Result<std::vector<Draft>> implement(const GenContext &, const Idea &idea, int count, Usage *) override
    {
        std::vector<Draft> out;
        if (const ScriptedIdea *s = script(idea.id))
            for (const auto &src : s->drafts)
                if (int(out.size()) < count)
                    out.push_back(
                        Draft{idea.title + " v" + std::to_string(out.size() + 1), src, {{"variant", out.size() + 1}}});
        return out;
    }

    Result<std::optional<Draft>> repair(const GenContext &, const Idea &idea, const KernelRecord &failed,
                                        Usage *) override
    {
        repaired.push_back(failed);
        const ScriptedIdea *s = script(idea.id);
        if (!s || !s->repair)
            return std::optional<Draft>();
        return std::optional<Draft>(Draft{"fixed", *s->repair, {{"repaired", true}}});
    }

private:
    const ScriptedIdea *script(const std::string &id) const
    {
        for (const auto &[key, s] : m_scripts)
            if (key == id)
                return &s;
        return nullptr;
    }

    std::deque<ScriptedIdea> m_queue;
    std::vector<std::pair<std::string, ScriptedIdea>> m_scripts;
};

} // namespace kf::test
