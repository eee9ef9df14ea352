#include "suite/suite_state.h"

#include <cstdio>
#include <fstream>
#include <sstream>

namespace kf {

SuiteEntry *SuiteState::find(const std::string &file)
{
    for (SuiteEntry &e : problems)
        if (e.file == file)
            return &e;
    return nullptr;
}

void to_json(nlohmann::json &j, const SuiteEntry &e)
{
    j = {{"file", e.file},
         {"name", e.name},
         {"session", e.session},
         {"status", e.status},
         {"reason", e.reason},
         {"policy", e.policy},
         {"eager_ms", e.eagerMs},
         {"best_ms", e.bestMs},
         {"precision", e.precision},
         {"kernelbench_passed", e.kernelbenchPassed},
         {"compile_ms", e.compileMs},
         {"compile_note", e.compileNote},
         {"compile_tried", e.compileTried},
         {"candidates", e.candidates},
         {"correct", e.correct},
         {"rounds", e.rounds},
         {"seconds", e.seconds},
         {"overhead_s", e.overheadSeconds},
         {"gpu", e.gpu}};
}

void from_json(const nlohmann::json &j, SuiteEntry &e)
{
    e = SuiteEntry{};
    e.file = j.at("file").get<std::string>();
    e.name = j.value("name", "");
    e.session = j.value("session", "");
    e.status = j.value("status", std::string(suite_status::Pending));
    e.reason = j.value("reason", "");
    e.policy = j.value("policy", "");
    e.eagerMs = j.value("eager_ms", 0.0);
    e.bestMs = j.value("best_ms", 0.0);
    e.precision = j.value("precision", "");
    e.kernelbenchPassed = j.value("kernelbench_passed", false);
    e.compileMs = j.value("compile_ms", 0.0);
    e.compileNote = j.value("compile_note", "");
    e.compileTried = j.value("compile_tried", e.compileMs > 0);
    e.candidates = j.value("candidates", 0);
    e.correct = j.value("correct", 0);
    e.rounds = j.value("rounds", 0);
    e.seconds = j.value("seconds", 0.0);
    e.overheadSeconds = j.value("overhead_s", 0.0);
    e.gpu = j.value("gpu", "");
}

void to_json(nlohmann::json &j, const SuiteState &s)
{
    j = {{"version", s.version},
         {"folder", s.folder},
         {"generator", s.generator},
         {"settings", s.settings},
         {"budget_per_problem_s", s.budgetPerProblem},
         {"problems", s.problems}};
}

Result<SuiteState> suiteStateFromJson(const nlohmann::json &j, const std::string &where)
{
    if (!j.is_object())
        return makeError(ErrorCode::Suite, "not a suite state (a JSON object)", where);
    SuiteState s;
    s.version = j.value("version", 0);
    if (s.version != 1)
        return makeError(ErrorCode::Suite, "suite state version " + std::to_string(s.version) + " is not 1", where);
    try {
        s.folder = j.value("folder", "");
        s.generator = j.value("generator", "");
        s.settings = j.value("settings", nlohmann::json::object());
        s.budgetPerProblem = j.value("budget_per_problem_s", 0.0);
        const auto &list = j.at("problems");
        for (std::size_t i = 0; i < list.size(); ++i) {
            try {
                s.problems.push_back(list[i].get<SuiteEntry>());
            } catch (const nlohmann::json::exception &e) {
                return makeError(ErrorCode::Suite, std::string("problems[") + std::to_string(i) + "]: " + e.what(),
                                 where);
            }
        }
    } catch (const nlohmann::json::exception &e) {
        return makeError(ErrorCode::Suite, e.what(), where);
    }
    return s;
}

Result<SuiteState> readSuiteState(const std::string &path)
{
    std::ifstream in(path, std::ios::binary);
    if (!in)
        return makeError(ErrorCode::NotFound, "no suite state", path);
    std::stringstream text;
    text << in.rdbuf();
    nlohmann::json j = nlohmann::json::parse(text.str(), nullptr, false);
    if (j.is_discarded())
        return makeError(ErrorCode::Suite, "the suite state is not JSON", path);
    return suiteStateFromJson(j, path);
}

Status writeFileAtomically(const std::string &path, const std::string &text)
{
    const std::string tmp = path + ".tmp";
    {
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        if (!(out << text) || !out.flush())
            return makeError(ErrorCode::Io, "cannot write", tmp);
    }
    if (std::rename(tmp.c_str(), path.c_str()) != 0)
        return makeError(ErrorCode::Io, "cannot replace", path);
    return Ok{};
}

Status writeSuiteState(const std::string &path, const SuiteState &s)
{
    return writeFileAtomically(path, nlohmann::json(s).dump(2) + "\n");
}

} // namespace kf
