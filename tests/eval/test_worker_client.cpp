// The worker client against a fake worker: the handshake and its failures, crash / hang /
// garbage recovery with the problem sent again, wrapper commands, and the process layer itself.
#include "eval/worker_client.h"

#include <QtTest>

#include <csignal>
#include <fstream>
#include <sstream>
#include <thread>

#include <sys/wait.h>
#include <unistd.h>

using namespace kf;
using namespace std::chrono_literals;

namespace {

ProcessOptions command(std::vector<std::string> argv)
{
    ProcessOptions o;
    o.argv = std::move(argv);
    return o;
}

const std::string kFake = KF_FAKE_WORKER;

WorkerConfig fakeConfig(std::vector<std::string> extra = {})
{
    WorkerConfig c;
    c.argv = {kFake};
    c.argv.insert(c.argv.end(), extra.begin(), extra.end());
    c.handshakeTimeout = 10s;
    c.requestTimeout = 10s;
    c.loadTimeout = 10s;
    return c;
}

Problem fakeProblem()
{
    Problem p;
    p.name = "fake";
    p.path = "fake.toml";
    p.text = "name = \"fake\"\n";
    p.variant = "small";
    return p;
}

std::vector<std::string> logLines(const std::string &path, const std::string &prefix)
{
    std::ifstream in(path);
    std::vector<std::string> out;
    for (std::string line; std::getline(in, line);)
        if (line.rfind(prefix + " ", 0) == 0)
            out.push_back(line);
    return out;
}

QString q(const std::string &s) { return QString::fromStdString(s); }

// A process state as /proc shows it: 'Z' for a zombie, 0 when it is gone.
char procState(pid_t pid)
{
    std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
    std::string all((std::istreambuf_iterator<char>(in)), {});
    auto close = all.rfind(')');
    return close == std::string::npos || close + 2 >= all.size() ? 0 : all[close + 2];
}

} // namespace

class TestWorkerClient : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;

    std::string logPath(const char *name) { return (m_dir.path() + "/" + name).toStdString(); }

private slots:
    void handshake()
    {
        WorkerClient client(fakeConfig());
        auto started = client.start();
        QVERIFY2(started.ok(), started.ok() ? "" : started.error().text().c_str());
        QVERIFY(client.running());
        QVERIFY(client.info().has_value());
        QCOMPARE(client.info()->protocol, kProtocolVersion);
        QCOMPARE(q(client.info()->gpu.arch), QString("sm_90a"));
        auto again = client.hello();
        QVERIFY(again.ok());
        QCOMPARE(q(again->torch), QString("2.11.0"));
        QCOMPARE(client.restarts(), 0);
    }

    void missingProgram_data()
    {
        QTest::addColumn<QString>("program");
        QTest::newRow("path") << "/nonexistent/kernelforge-worker";
        QTest::newRow("on PATH") << "kernelforge-worker-that-does-not-exist";
    }
    void missingProgram()
    {
        QFETCH(QString, program);
        WorkerConfig c;
        c.argv = {program.toStdString(), "--compile"};
        WorkerClient client(c);
        auto started = client.start();
        QVERIFY(!started.ok());
        QCOMPARE(q(toString(started.error().code)), QString("worker-start"));
        QVERIFY2(started.error().message.find(program.toStdString() + " --compile") != std::string::npos,
                 started.error().message.c_str());
        QVERIFY2(started.error().message.find("No such file") != std::string::npos, started.error().message.c_str());
        // Requests say the same instead of hanging or crashing.
        auto hello = client.hello();
        QVERIFY(!hello.ok());
        QCOMPARE(q(toString(hello.error().code)), QString("worker-start"));
    }

    void exitsBeforeHandshake()
    {
        WorkerClient client(fakeConfig({"--exit-early"}));
        auto started = client.start();
        QVERIFY(!started.ok());
        const auto &m = started.error().message;
        QVERIFY2(m.find("exited with 3") != std::string::npos, m.c_str());
        QVERIFY2(m.find("cannot open libcuda.so.1") != std::string::npos, m.c_str());
        QVERIFY2(m.find(kFake) != std::string::npos, m.c_str());
    }

    void wrongProtocolVersion()
    {
        WorkerClient client(fakeConfig({"--protocol", "99"}));
        auto started = client.start();
        QVERIFY(!started.ok());
        QCOMPARE(q(toString(started.error().code)), QString("protocol"));
        QVERIFY2(started.error().message.find("version 99") != std::string::npos, started.error().message.c_str());
    }

    void speaksSomethingElse()
    {
        WorkerClient client(fakeConfig({"--garbage-hello"}));
        auto started = client.start();
        QVERIFY(!started.ok());
        QCOMPARE(q(toString(started.error().code)), QString("protocol"));
        QVERIFY2(started.error().message.find("does not speak") != std::string::npos, started.error().message.c_str());
        QVERIFY2(started.error().message.find("Welcome") != std::string::npos, started.error().message.c_str());

        // Not a worker at all: a program that prints its own text.
        WorkerConfig echo;
        echo.argv = {"/bin/echo", "hello there"};
        WorkerClient other(echo);
        auto s2 = other.start();
        QVERIFY(!s2.ok());
        QVERIFY2(s2.error().message.find("does not speak") != std::string::npos, s2.error().message.c_str());
    }

    void silentHandshakeTimesOut()
    {
        auto c = fakeConfig({"--hang-hello"});
        c.handshakeTimeout = 500ms;
        WorkerClient client(c);
        QElapsedTimer timer;
        timer.start();
        auto started = client.start();
        QVERIFY(!started.ok());
        QVERIFY2(started.error().message.find("did not answer the handshake within 0.5 s") != std::string::npos,
                 started.error().message.c_str());
        QVERIFY(timer.elapsed() < 5000);
    }

    void loadVerifyTime()
    {
        WorkerClient client(fakeConfig());
        auto loaded = client.load(fakeProblem());
        QVERIFY2(loaded.ok(), loaded.ok() ? "" : loaded.error().text().c_str());
        QCOMPARE(loaded->flops, 1e6);
        QCOMPARE(q(loaded->graph.at(0).op), QString("aten::softmax"));
        auto baseline = client.baseline(50);
        QVERIFY(baseline.ok());
        QCOMPARE(baseline->timing.medianMs, 2.0);
        QCOMPARE(client.baselineMs(), 2.0);
        QVERIFY(baseline->flags.value("cudnn_tf32", false));

        auto verified = client.verify("c1", "// @precision fp32\n",
                                      std::string("\x7f"
                                                  "ELF\0",
                                                  5),
                                      Policy::Loose, 3);
        QVERIFY2(verified.ok(), verified.ok() ? "" : verified.error().text().c_str());
        QCOMPARE(q(toString(verified->verdict)), QString("correct"));
        QCOMPARE(verified->trials.size(), std::size_t(3));
        QVERIFY(verified->policy == Policy::Loose);
        QVERIFY(!verified->timing);
        auto timing = client.time("c1", 100);
        QVERIFY(timing.ok());
        QVERIFY(timing->timing);
        QCOMPARE(timing->timing->medianMs, 0.5);
        QCOMPARE(q(toString(timing->verdict)), QString("correct"));
        QVERIFY(client.release("c1").ok());
        auto unknown = client.time("c1", 100);
        QVERIFY(!unknown.ok());
        QCOMPARE(q(toString(unknown.error().code)), QString("unknown-key"));

        auto evaluated = client.evaluate("c2", "// plain\n", "", Policy::Strict, 5, 100);
        QVERIFY(evaluated.ok());
        QVERIFY(evaluated->timing.has_value());
        QCOMPARE(client.restarts(), 0);
    }

    void refusalIsAnError()
    {
        WorkerClient client(fakeConfig());
        auto noProblem = client.verify("c", "x", "", Policy::Strict);
        QVERIFY(!noProblem.ok());
        QCOMPARE(q(toString(noProblem.error().code)), QString("no-problem"));
        QVERIFY(client.load(fakeProblem()).ok());
        auto refused = client.verify("c", "FAKE_REFUSE", "", Policy::Strict);
        QVERIFY(!refused.ok());
        QCOMPARE(q(toString(refused.error().code)), QString("bad-request"));
        QCOMPARE(q(refused.error().where), QString("fake"));
        QVERIFY(client.running()); // a refusal leaves the worker alone
        QCOMPARE(client.restarts(), 0);
    }

    void crashRestartsAndReloads()
    {
        std::string log = logPath("crash.log");
        WorkerClient client(fakeConfig({"--log", log}));
        QVERIFY(client.load(fakeProblem()).ok());
        auto crashed = client.verify("boom", "// @precision fp16\n// FAKE_CRASH\n", "", Policy::Strict);
        QVERIFY2(crashed.ok(), crashed.ok() ? "" : crashed.error().text().c_str());
        QCOMPARE(q(toString(crashed->verdict)), QString("crashed"));
        QVERIFY2(crashed->reason.find("killed by signal 11") != std::string::npos, crashed->reason.c_str());
        QVERIFY2(crashed->reason.find("simulated illegal address in boom") != std::string::npos,
                 crashed->reason.c_str());
        QVERIFY(client.stderrTail().find("simulated illegal address") != std::string::npos);

        auto next = client.verify("fine", "// fine\n", "", Policy::Strict);
        QVERIFY2(next.ok(), next.ok() ? "" : next.error().text().c_str());
        QCOMPARE(q(toString(next->verdict)), QString("correct"));
        QCOMPARE(client.restarts(), 1);
        // A new process, and the problem went to it without being asked.
        QCOMPARE(logLines(log, "start").size(), std::size_t(2));
        QCOMPARE(logLines(log, "load").size(), std::size_t(2));
        QVERIFY(logLines(log, "start")[0] != logLines(log, "start")[1]);
    }

    // A module's bytes (newlines and zeros among them) go raw after the load line, and again to a
    // restarted worker.
    void moduleBytesFollowTheLoad()
    {
        std::string log = logPath("module.log");
        WorkerClient client(fakeConfig({"--log", log}));
        Problem p = fakeProblem();
        p.modulePath = "m.pt";
        std::string bytes(3'000'000, '\0');
        for (std::size_t i = 0; i < bytes.size(); ++i)
            bytes[i] = char(i % 251);
        p.module = std::make_shared<const std::string>(std::move(bytes));
        QVERIFY(client.load(p).ok());
        QVERIFY(client.verify("boom", "// FAKE_CRASH\n", "", Policy::Strict).ok());
        auto next = client.verify("fine", "// fine\n", "", Policy::Strict);
        QVERIFY2(next.ok(), next.ok() ? "" : next.error().text().c_str());
        QCOMPARE(q(toString(next->verdict)), QString("correct"));
        QCOMPARE(logLines(log, "module"), (std::vector<std::string>{"module 3000000", "module 3000000"}));
    }

    void faultReplyRestarts()
    {
        WorkerClient client(fakeConfig());
        QVERIFY(client.load(fakeProblem()).ok());
        auto fault = client.evaluate("f", "FAKE_FAULT", "", Policy::Strict, 5, 100);
        QVERIFY(fault.ok());
        QCOMPARE(q(toString(fault->verdict)), QString("crashed"));
        QVERIFY2(fault->reason.find("error 700") != std::string::npos, fault->reason.c_str());
        // The worker exits by itself after the reply; the next request must not be blamed for it.
        auto next = client.evaluate("g", "fine", "", Policy::Strict, 5, 100);
        QVERIFY(next.ok());
        QCOMPARE(q(toString(next->verdict)), QString("correct"));
        QCOMPARE(client.restarts(), 1);
    }

    void hangTimesOutAndRecovers()
    {
        WorkerClient client(fakeConfig());
        QVERIFY(client.load(fakeProblem()).ok());
        QElapsedTimer timer;
        timer.start();
        auto hung = client.verify("h", "FAKE_HANG", "", Policy::Strict, 5, 1000ms);
        qint64 elapsed = timer.elapsed();
        QVERIFY(hung.ok());
        QCOMPARE(q(toString(hung->verdict)), QString("timed out"));
        QVERIFY2(hung->reason.find("within 1 s") != std::string::npos, hung->reason.c_str());
        QVERIFY2(elapsed >= 900 && elapsed < 5000, std::to_string(elapsed).c_str());

        auto next = client.verify("ok", "fine", "", Policy::Strict);
        QVERIFY(next.ok());
        QCOMPARE(q(toString(next->verdict)), QString("correct"));
        QCOMPARE(client.restarts(), 1);

        auto hungTime = client.time("ok", 100, 300ms); // the fake's timing takes 30 ms: fine
        QVERIFY(hungTime.ok());
    }

    void garbageIsAProtocolError()
    {
        WorkerClient client(fakeConfig());
        QVERIFY(client.load(fakeProblem()).ok());
        auto garbage = client.verify("g", "FAKE_GARBAGE", "", Policy::Strict);
        QVERIFY(!garbage.ok());
        QCOMPARE(q(toString(garbage.error().code)), QString("protocol"));
        QVERIFY2(garbage.error().message.find("this is not json") != std::string::npos,
                 garbage.error().message.c_str());
        auto next = client.verify("ok", "fine", "", Policy::Strict);
        QVERIFY(next.ok());
        QCOMPARE(client.restarts(), 1);
    }

    void progressEvents()
    {
        auto c = fakeConfig();
        std::vector<std::string> seen;
        c.onProgress = [&](const std::string &m) { seen.push_back(m); };
        WorkerClient client(c);
        QVERIFY(client.load(fakeProblem()).ok());
        auto r = client.verify("p", "FAKE_PROGRESS", "", Policy::Strict);
        QVERIFY(r.ok());
        QCOMPARE(seen.size(), std::size_t(2));
        QCOMPARE(q(seen[1]), QString("trial 2 of 2"));
    }

    void wrapperCommands_data()
    {
        QTest::addColumn<QStringList>("prefix");
        QTest::newRow("sh -c exec") << QStringList{"/bin/sh", "-c", "exec \"$0\" \"$@\""};
        QTest::newRow("env") << QStringList{"/usr/bin/env", "KF_FAKE_TAG=wrapped"};
        QTest::newRow("sh without exec") << QStringList{"/bin/sh", "-c", "\"$0\" \"$@\"; exit $?"};
    }
    void wrapperCommands()
    {
        QFETCH(QStringList, prefix);
        WorkerConfig c = fakeConfig();
        c.argv.clear();
        for (const auto &p : prefix)
            c.argv.push_back(p.toStdString());
        c.argv.push_back(kFake);
        WorkerClient client(c);
        auto started = client.start();
        QVERIFY2(started.ok(), started.ok() ? "" : started.error().text().c_str());
        QVERIFY(client.load(fakeProblem()).ok());
        // A crash behind the wrapper (which then reports it, or dies with it) is still a crash.
        auto crashed = client.verify("x", "FAKE_CRASH", "", Policy::Strict);
        QVERIFY(crashed.ok());
        QCOMPARE(q(toString(crashed->verdict)), QString("crashed"));
        auto hung = client.verify("h", "FAKE_HANG", "", Policy::Strict, 5, 500ms);
        QVERIFY(hung.ok());
        QCOMPARE(q(toString(hung->verdict)), QString("timed out"));
        auto next = client.verify("y", "fine", "", Policy::Strict);
        QVERIFY(next.ok());
        QCOMPARE(q(toString(next->verdict)), QString("correct"));
        QCOMPARE(client.restarts(), 2);
    }

    void environmentReachesWorker()
    {
        auto c = fakeConfig();
        c.env = {"KF_FAKE_TAG=from-config", "CUDA_VISIBLE_DEVICES=3"};
        WorkerClient client(c);
        QVERIFY(client.start().ok());
        QCOMPARE(q(client.info()->worker), QString("fake 1.0 tag=from-config"));
        QCOMPARE(q(client.info()->gpu.name), QString("Fake GPU [3]"));
    }

    void interruptFromAnotherThread()
    {
        WorkerClient client(fakeConfig());
        QVERIFY(client.load(fakeProblem()).ok());
        std::thread canceller([&] {
            std::this_thread::sleep_for(300ms);
            client.interrupt();
        });
        QElapsedTimer timer;
        timer.start();
        auto r = client.verify("h", "FAKE_HANG", "", Policy::Strict, 5, 20s);
        canceller.join();
        QVERIFY(!r.ok());
        QCOMPARE(q(toString(r.error().code)), QString("cancelled"));
        QVERIFY(timer.elapsed() < 5000);
        auto next = client.verify("ok", "fine", "", Policy::Strict);
        QVERIFY(next.ok());
    }

    void compileRequest()
    {
        WorkerClient client(fakeConfig({"--compile"}));
        QVERIFY(client.start().ok());
        QVERIFY(!client.info()->gpu.present);
        auto out = client.compile("__global__ void k() {}", {"k"}, "sm_90a");
        QVERIFY(out.ok());
        QVERIFY(out->ok);
        QCOMPARE(out->cubin.substr(0, 6),
                 std::string("\x7f"
                             "ELF\0\xff",
                             6));
        QCOMPARE(q(out->loweredNames["k"]), QString("_Zk"));
        auto bad = client.compile("FAKE_COMPILE_ERROR", {"k"}, "sm_90a");
        QVERIFY(bad.ok() && !bad->ok);
        QCOMPARE(bad->diagnostics.at(0).line, 3);
        auto crash = client.compile("FAKE_CRASH", {"k"}, "sm_90a");
        QVERIFY(crash.ok() && !crash->ok);
        QVERIFY2(crash->log.find("signal 11") != std::string::npos, crash->log.c_str());
        auto refused = client.verify("k", "x", "", Policy::Strict);
        QVERIFY(!refused.ok());
        QCOMPARE(q(toString(refused.error().code)), QString("unsupported"));
    }

    void evalTimeoutScales()
    {
        QCOMPARE(evalTimeout(0, 5, 100).count(), 20000);
        QCOMPARE(evalTimeout(1, 5, 100).count(), 20000); // 50 × 1 ms × 115 = 5.75 s < the floor
        QCOMPARE(evalTimeout(10, 5, 100).count(), 57500);
        QCOMPARE(evalTimeout(10, 5, 0).count(), 20000);
        QCOMPARE(evalTimeout(100, 5, 0).count(), 75000);
        QCOMPARE(evalTimeout(std::nan(""), 5, 100).count(), 20000);
        QVERIFY(evalTimeout(1e12, 5, 100).count() <= 24LL * 3600 * 1000);
    }

    void commandLines()
    {
        QCOMPARE(splitCommandLine("ssh gpuhost  kernelforge-worker"),
                 (std::vector<std::string>{"ssh", "gpuhost", "kernelforge-worker"}));
        QCOMPARE(splitCommandLine("srun --gres=gpu:1 '/opt/k f/worker' \"a \\\"b\\\"\" c\\ d"),
                 (std::vector<std::string>{"srun", "--gres=gpu:1", "/opt/k f/worker", "a \"b\"", "c d"}));
        QCOMPARE(splitCommandLine("  "), std::vector<std::string>{});
        QCOMPARE(q(joinArgv({"ssh", "host", "a b", "it's"})), QString("ssh host 'a b' 'it'\\''s'"));

        QByteArray saved = qgetenv("KERNELFORGE_WORKER");
        qputenv("KERNELFORGE_WORKER", "ssh gpuhost kernelforge-worker --compile");
        QCOMPARE(defaultWorkerArgv(), (std::vector<std::string>{"ssh", "gpuhost", "kernelforge-worker", "--compile"}));
        qputenv("KERNELFORGE_WORKER", QByteArray::fromStdString(kFake));
        QCOMPARE(defaultWorkerArgv(), std::vector<std::string>{kFake});
        qunsetenv("KERNELFORGE_WORKER");
        QVERIFY(!defaultWorkerArgv().empty());
        if (!saved.isNull())
            qputenv("KERNELFORGE_WORKER", saved);
    }

    // ---- the process layer ----

    void exitDescriptions()
    {
        Process exited;
        QVERIFY(exited.start(command({"/bin/sh", "-c", "exit 3"})).ok());
        QVERIFY(exited.waitForExit(Clock::now() + 5s));
        exited.kill();
        QCOMPARE(q(exited.exitDescription()), QString("exited with 3"));

        Process signalled;
        QVERIFY(signalled.start(command({"/bin/sh", "-c", "kill -SEGV $$"})).ok());
        QVERIFY(signalled.waitForExit(Clock::now() + 5s));
        signalled.kill();
        QVERIFY2(signalled.exitDescription().rfind("killed by signal 11", 0) == 0, signalled.exitDescription().c_str());

        Process running;
        QVERIFY(running.start(command({"/bin/sleep", "30"})).ok());
        QVERIFY(running.isRunning());
        QCOMPARE(q(running.exitDescription()), QString("running"));
        QVERIFY(!running.waitForExit(Clock::now() + 100ms));
        running.kill();
        QVERIFY(!running.isRunning());
        QVERIFY2(running.exitDescription().rfind("killed by signal 9", 0) == 0, running.exitDescription().c_str());
    }

    void noZombiesAndGroupKilled()
    {
        pid_t child = -1, grandchild = -1;
        {
            Process p;
            QVERIFY(p.start(command({"/bin/sh", "-c", "sleep 60 & echo $!; wait"})).ok());
            child = p.pid();
            std::string line;
            QCOMPARE(p.readLine(line, Clock::now() + 5s), IoStatus::Ok);
            grandchild = pid_t(std::stol(line));
            QVERIFY(procState(grandchild) != 0);
        } // destroyed while running: the whole group goes, and the child is reaped
        errno = 0;
        QCOMPARE(waitpid(child, nullptr, WNOHANG), pid_t(-1));
        QCOMPARE(errno, ECHILD);
        QCOMPARE(procState(child), char(0));
        // The grandchild is init's to reap; it must at least be dead.
        QTRY_VERIFY_WITH_TIMEOUT(procState(grandchild) == 0 || procState(grandchild) == 'Z', 5000);
    }

    void readLineDeadline()
    {
        Process p;
        QVERIFY(p.start(command({"/bin/sleep", "30"})).ok());
        QElapsedTimer timer;
        timer.start();
        std::string line;
        QCOMPARE(p.readLine(line, Clock::now() + 200ms), IoStatus::Timeout);
        QVERIFY(timer.elapsed() >= 150 && timer.elapsed() < 2000);
    }

    void stderrDrainedAndBounded()
    {
        // 300 KB on stderr before the first stdout line: without draining stderr while waiting,
        // the child would block on a full pipe and the read would time out.
        ProcessOptions o;
        o.argv = {"/bin/sh", "-c", "head -c 300000 /dev/zero | tr '\\0' x >&2; echo tail-marker >&2; echo done"};
        o.stderrLimit = 4096;
        Process p;
        QVERIFY(p.start(o).ok());
        std::string line;
        QCOMPARE(p.readLine(line, Clock::now() + 10s), IoStatus::Ok);
        QCOMPARE(q(line), QString("done"));
        p.drainStderr(Clock::now() + 2s);
        QVERIFY(p.stderrTail().size() <= 2 * 4096);
        QVERIFY(p.stderrTail().find("tail-marker") != std::string::npos);
        QCOMPARE(p.readLine(line, Clock::now() + 5s), IoStatus::Eof);
    }

    void longLinesBothWays()
    {
        // cat echoes while we are still writing: the write must keep reading stdout meanwhile.
        Process p;
        QVERIFY(p.start(command({"/bin/cat"})).ok());
        std::string big(3 * 1024 * 1024, 'a');
        big[12345] = 'b';
        QCOMPARE(p.writeLine(big, Clock::now() + 10s), IoStatus::Ok);
        std::string line;
        QCOMPARE(p.readLine(line, Clock::now() + 10s), IoStatus::Ok);
        QCOMPARE(line.size(), big.size());
        QVERIFY(line == big);
        p.closeStdin();
        QCOMPARE(p.readLine(line, Clock::now() + 5s), IoStatus::Eof);
    }

    void writeToDeadChild()
    {
        Process p;
        QVERIFY(p.start(command({"/bin/true"})).ok());
        QVERIFY(p.waitForExit(Clock::now() + 5s));
        // EPIPE, not SIGPIPE (which would end this test program).
        QCOMPARE(p.writeLine(std::string(200000, 'x'), Clock::now() + 5s), IoStatus::Eof);
    }
};

QTEST_GUILESS_MAIN(TestWorkerClient)
#include "test_worker_client.moc"
