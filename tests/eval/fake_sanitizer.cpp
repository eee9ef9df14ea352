// A stand-in for compute-sanitizer around the fake worker, for machines without a GPU. It takes
// the real tool's options, runs the program after them with three variables set
// (KF_FAKE_SANITIZER_TOOL, _LOG and _FILTER) and, once it exits, adds the tool's summary lines to
// the log file and exits with the --error-exitcode when errors were logged. The fake worker writes
// the findings: a memcheck error for candidates marked FAKE_OOB, a racecheck hazard for those marked
// FAKE_SMEM_RACE.
//   own options: --fake-unsupported (refuses the device, as on some virtualised GPUs),
//                --fake-racecheck-unsupported (only racecheck refuses),
//                --fake-log FILE (appends "run TOOL FILTER" per run),
//                --fake-ms N (waits N ms before starting the program: the real tool, a CUDA context
//                and libtorch take seconds to come up, which is what a search's budget pays for),
//                --fake-kernel-ms N (waits N ms more on every run but the probe's: the tool's time on
//                a large problem is far beyond its time on the probe's tiny one),
//                --fake-times FILE (appends "START_NS END_NS TOOL" per run, CLOCK_MONOTONIC, as the
//                fake worker's "time" lines, so a test can see that nothing was timed meanwhile)
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

namespace {

void append(const std::string &path, const std::string &text)
{
    if (path.empty())
        return;
    std::ofstream out(path, std::ios::app);
    out << text;
}

std::string readAll(const std::string &path)
{
    std::ifstream in(path);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

long long monotonicNs()
{
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1'000'000'000LL + ts.tv_nsec;
}

int count(const std::string &text, const std::string &prefix)
{
    int n = 0;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);)
        n += line.rfind(prefix, 0) == 0;
    return n;
}

} // namespace

int main(int argc, char **argv)
{
    std::string tool = "memcheck", log, filter, fakeLog, fakeTimes;
    int errorExit = 0, startMs = 0, kernelMs = 0;
    bool unsupported = false, racecheckUnsupported = false;
    int i = 1;
    for (; i < argc; ++i) {
        const std::string a = argv[i];
        auto next = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
        if (a == "--version") {
            std::printf("NVIDIA (R) Compute Sanitizer\nCopyright (c) 2020-2025 (a stand-in for tests)\n"
                        "Version 2025.3.1.0 fake\n");
            return 0;
        }
        if (a == "--tool")
            tool = next();
        else if (a == "--error-exitcode")
            errorExit = std::atoi(next().c_str());
        else if (a == "--log-file")
            log = next();
        else if (a == "--kernel-name")
            filter = next();
        else if (a == "--print-limit" || a == "--report-api-errors" || a == "--racecheck-report" || a == "--padding")
            next();
        else if (a == "--fake-unsupported")
            unsupported = true;
        else if (a == "--fake-racecheck-unsupported")
            racecheckUnsupported = true;
        else if (a == "--fake-log")
            fakeLog = next();
        else if (a == "--fake-ms")
            startMs = std::atoi(next().c_str());
        else if (a == "--fake-kernel-ms")
            kernelMs = std::atoi(next().c_str());
        else if (a == "--fake-times")
            fakeTimes = next();
        else if (a.rfind("--", 0) == 0) {
            std::fprintf(stderr, "========= Error: unrecognized option %s\n", a.c_str());
            return 1;
        } else
            break;
    }
    if (i >= argc) {
        std::fprintf(stderr, "========= Error: no application to check\n");
        return 1;
    }
    append(fakeLog, "run " + tool + " " + filter + "\n");
    const long long started = monotonicNs();
    if (filter.find("kf_sanitizer_probe") == std::string::npos)
        startMs += kernelMs;
    if (startMs > 0)
        std::this_thread::sleep_for(std::chrono::milliseconds(startMs));
    append(log, "========= COMPUTE-SANITIZER\n");
    if (unsupported || (racecheckUnsupported && tool == "racecheck")) {
        append(log,
               "========= Error: Device not supported. Please refer to the \"Supported Devices\" section of the "
               "sanitizer documentation\n");
        return 1;
    }

    const pid_t child = fork();
    if (child == 0) {
        setenv("KF_FAKE_SANITIZER_TOOL", tool.c_str(), 1);
        setenv("KF_FAKE_SANITIZER_LOG", log.c_str(), 1);
        setenv("KF_FAKE_SANITIZER_FILTER", filter.c_str(), 1);
        execvp(argv[i], argv + i);
        std::fprintf(stderr, "========= Error: cannot start %s: %s\n", argv[i], std::strerror(errno));
        _exit(127);
    }
    int status = 0;
    while (waitpid(child, &status, 0) < 0 && errno == EINTR) {}
    append(fakeTimes, std::to_string(started) + " " + std::to_string(monotonicNs()) + " " + tool + "\n");
    const std::string text = readAll(log);
    // The real tool counts its own failure among the errors too.
    const int errors = count(text, "========= Invalid") + count(text, "========= Error: Race") +
        count(text, "========= Internal Sanitizer Error");
    std::string summary;
    if (WIFEXITED(status) && WEXITSTATUS(status) != 0)
        summary += "========= Target application returned an error\n";
    if (tool == "racecheck")
        summary += "========= RACECHECK SUMMARY: " + std::to_string(errors) + " hazards displayed (" +
            std::to_string(errors) + " errors, 0 warnings)\n";
    summary += "========= ERROR SUMMARY: " + std::to_string(errors) + (errors == 1 ? " error\n" : " errors\n");
    append(log, summary);
    if (errors > 0 && errorExit != 0)
        return errorExit;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
