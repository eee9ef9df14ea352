// The search path of the window without a GPU: the engine facade runs a real Search against the
// fake worker (tests/eval/fake_worker.cpp) with a scripted generator. Start from the window,
// watch the tree, chart and progress fill, cancel (the panel says what the run found, until
// another session is shown), re-benchmark a hand-edited candidate through the worker path, and
// reopen the session; a compile-only search, whose rounds wait for a GPU rather than look done.
// test_gpu_workbench does the same on a real GPU.
// Also the language-model fields of the search panel: shown for the LLM generators, checked as
// they are typed, kept in the settings without a key, handed to the generator as kernelforge-cli
// hands its options, and a server that cannot be reached reported in the message bar.
#include "../search/scripted_generator.h"
#include "candidate_pane.h"
#include "cuda_editor.h"
#include "gui_support.h"
#include "message_bar.h"
#include "model/format.h"
#include "model/outline_filter.h"
#include "model/outline_model.h"
#include "model/points_model.h"
#include "model/roles.h"
#include "problem_page.h"
#include "round_chart.h"
#include "search_panel.h"

#include <QComboBox>
#include <QFile>
#include <QGroupBox>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QToolButton>
#include <QTreeView>

#include <mutex>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

using namespace kf;
using namespace kf::ui;
using namespace kf::ui::test;

class TestGuiSearch : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void startCancelRebenchmarkReopen();
    void compileOnlySearch();
    void modelFields_data();
    void modelFields();
    void modelFieldsPersist();
    void modelSettingsReachTheGenerator();
    void unreachableServerIsReported();
};

namespace kf::ui {
// For QCOMPARE's message (found by argument-dependent lookup).
char *toString(const GeneratorChoice &c)
{
    return qstrdup(qPrintable(QStringLiteral("%1 url=%2 model=%3 key=%4 env=%5 file=%6")
                                  .arg(c.name, c.baseUrl, c.model, toString(c.keySource), c.keyEnv, c.keyFile)));
}
} // namespace kf::ui

namespace {

// A port on 127.0.0.1 that was free a moment ago: nothing listens there.
quint16 closedPort()
{
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t size = sizeof a;
    quint16 port = 0;
    if (fd >= 0 && ::bind(fd, reinterpret_cast<sockaddr *>(&a), sizeof a) == 0 &&
        ::getsockname(fd, reinterpret_cast<sockaddr *>(&a), &size) == 0)
        port = ntohs(a.sin_port);
    if (fd >= 0)
        ::close(fd);
    return port;
}

// Shows `c` in the panel's own widgets, as a person would type it.
void typeChoice(SearchPanel &panel, const GeneratorChoice &c)
{
    panel.findChild<QComboBox *>(QStringLiteral("generator"))->setCurrentText(c.name);
    auto *source = panel.findChild<QComboBox *>(QStringLiteral("keySource"));
    source->setCurrentIndex(source->findData(int(c.keySource)));
    panel.findChild<QLineEdit *>(QStringLiteral("baseUrl"))->setText(c.baseUrl);
    panel.findChild<QLineEdit *>(QStringLiteral("model"))->setText(c.model);
    panel.findChild<QLineEdit *>(QStringLiteral("keyEnv"))->setText(c.keyEnv);
    panel.findChild<QLineEdit *>(QStringLiteral("keyFile"))->setText(c.keyFile);
}

// A search session for softmax made through the window, with `choice` in the search panel.
bool newSession(Workbench &wb, const QString &file, const GeneratorChoice &choice)
{
    MainWindow &w = *wb.window;
    w.show(); // clicks reach shown widgets only
    if (!QTest::qWaitFor([&] { return w.problems()->currentProblem() != nullptr; }, 20000))
        return false;
    SearchSettings s;
    s.rounds = 1;
    s.ideasPerRound = 1;
    s.implsPerIdea = 1;
    s.timingTrials = 10;
    w.searchPanel()->setSettings(s);
    typeChoice(*w.searchPanel(), choice);
    QSignalSpy opened(wb.engine.get(), &Engine::sessionOpened);
    w.newSession(QStringLiteral("softmax"), file);
    return opened.wait(20000) || opened.count() > 0;
}

} // namespace

void TestGuiSearch::initTestCase()
{
    qputenv("KF_TEST_KEY_SET", "sk-test-from-the-environment");
    qunsetenv("KF_TEST_KEY_UNSET");
    qunsetenv("ANTHROPIC_API_KEY");
}

void TestGuiSearch::startCancelRebenchmarkReopen()
{
    Workbench wb;
    MainWindow &w = *wb.window;
    // Each timing takes 300 ms in the fake worker, so the search is still running when cancelled.
    EngineConfig config;
    config.workerArgv = {KF_FAKE_WORKER, "--time-ms", "300"};
    wb.engine->setConfig(config);
    wb.engine->setGeneratorFactory([](const std::string &, const nlohmann::json &, std::string *) {
        std::vector<kf::test::ScriptedIdea> ideas;
        for (int i = 0; i < 12; ++i)
            ideas.push_back({"idea" + std::to_string(i),
                             "Scripted idea " + std::to_string(i),
                             {kf::test::fakeKernel(1.0 / (i + 2)), kf::test::fakeKernel(1.0 / (i + 1.5))},
                             true,
                             std::nullopt});
        return std::make_shared<kf::test::ScriptedGenerator>(ideas);
    });
    w.show();
    QSignalSpy probed(wb.engine.get(), &Engine::gpuChecked);
    wb.engine->probeGpu();
    QTRY_VERIFY_WITH_TIMEOUT(wb.engine->gpu().present, 30000);

    QTRY_VERIFY_WITH_TIMEOUT(w.problems()->currentProblem() != nullptr, 20000);
    SearchSettings s;
    s.rounds = 6;
    s.ideasPerRound = 2;
    s.implsPerIdea = 2;
    s.timingTrials = 10;
    s.timeBudgetSeconds = 600; // never reached: it is there for the chart's line
    w.searchPanel()->setSettings(s);
    const QString file = wb.dir.filePath(QStringLiteral("softmax.kfsession"));
    QSignalSpy opened(wb.engine.get(), &Engine::sessionOpened);
    w.newSession(QStringLiteral("softmax"), file);
    QVERIFY(opened.wait(20000));
    QVERIFY(!wb.engine->session()->readOnly);
    // An existing file is never overwritten.
    QSignalSpy failed(wb.engine.get(), &Engine::sessionFailed);
    w.newSession(QStringLiteral("softmax"), file);
    QVERIFY(failed.wait(10000));
    QVERIFY(failed.first().at(1).toString().contains(QStringLiteral("exists")));

    QTRY_VERIFY(w.searchPanel()->startButton()->isEnabled());
    QSignalSpy finished(wb.engine.get(), &Engine::searchFinished);
    QTest::mouseClick(w.searchPanel()->startButton(), Qt::LeftButton);
    QVERIFY(wb.engine->searching());
    QVERIFY(!w.searchPanel()->startButton()->isEnabled());
    QTRY_VERIFY_WITH_TIMEOUT(w.pointsModel()->rowCount() >= 2, 60000);
    QVERIFY(w.outlineModel()->rowCount() >= 1);
    QVERIFY(w.searchPanel()->progressBar()->isVisible());
    QVERIFY(w.searchPanel()->progressBar()->value() > 0);
    QVERIFY(w.console()->toPlainText().contains(QStringLiteral("correct")));
    // Under the chart: the budget left (and what the sanitizer gate does, where it is on).
    QTRY_VERIFY_WITH_TIMEOUT(w.chart()->liveStatus().contains(QStringLiteral("s of the budget left")), 10000);
    QVERIFY(!w.console()->toPlainText().contains(QStringLiteral("budget: "))); // a status, not a log line
    QTest::mouseClick(w.searchPanel()->cancelButton(), Qt::LeftButton);
    QVERIFY(finished.wait(30000) || finished.count() > 0);
    QVERIFY(w.chart()->liveStatus().isEmpty());
    QVERIFY2(!finished.first().at(1).toBool(), qPrintable(finished.first().at(0).toString()));
    QVERIFY(finished.first().at(0).toString().startsWith(QStringLiteral("cancelled")));
    QVERIFY(!wb.engine->searching());
    // The panel and the log say what the run found.
    const QString summary = w.searchPanel()->statusText();
    QVERIFY2(summary.startsWith(QStringLiteral("Finished (cancelled): ")) &&
                 summary.contains(QStringLiteral(" correct")),
             qPrintable(summary));
    QVERIFY(summary.contains(QStringLiteral("Best: #")));
    QVERIFY(w.console()->toPlainText().contains(summary));
    QTRY_VERIFY_WITH_TIMEOUT(wb.engine->session()->bestNode != 0, 10000);
    const std::size_t afterSearch = wb.engine->session()->nodes.size();

    // Hand-edit the best kernel and re-benchmark it: a new child marked hand-edited.
    const std::int64_t best = wb.engine->session()->bestNode;
    w.selectNode(best);
    CudaEditor *editor = w.candidate()->editor();
    editor->setCursorPosition(0, 0);
    QTest::keyClicks(editor, QStringLiteral("// edited by hand in the test"));
    QTest::keyClick(editor, Qt::Key_Return);
    QSignalSpy rebenched(wb.engine.get(), &Engine::rebenchmarked);
    auto *button = w.candidate()->findChild<QToolButton *>(QStringLiteral("rebenchmark"));
    QVERIFY(button);
    QTRY_VERIFY(button->isEnabled());
    QTest::mouseClick(button, Qt::LeftButton);
    QVERIFY(rebenched.wait(60000));
    const std::int64_t edited = rebenched.first().at(0).toLongLong();
    QCOMPARE(rebenched.first().at(1).toString(), QStringLiteral("correct"));
    QTRY_COMPARE_WITH_TIMEOUT(w.selectedNode(), edited, 10000);
    QVERIFY(w.outlineModel()->indexOf(edited).data().toString().contains(QStringLiteral("hand-edited")));

    // The edit is in the session now: nothing is left unsaved.
    QVERIFY(w.candidate()->draftNodes().isEmpty());

    // Reopen: everything is in the file. Another session shown clears the last run's message.
    wb.engine->closeSession();
    QVERIFY(wb.open(file));
    QVERIFY(w.searchPanel()->statusText().isEmpty());
    QVERIFY(!w.searchPanel()->progressBar()->isVisible());
    const SnapshotPtr again = wb.engine->session();
    QCOMPARE(again->nodes.size(), afterSearch + 1);
    const NodeView *n = again->node(edited);
    QVERIFY(n && n->record.edited);
    QCOMPARE(*n->record.parent, best);
    QVERIFY(n->record.text.find("// edited by hand in the test") != std::string::npos);
    QCOMPARE(again->node(best)->record.round, n->record.round);
}

void TestGuiSearch::compileOnlySearch()
{
    // Candidates that compile wait for a GPU: their rounds are not shown as done, a filter finds
    // them, and the end message says so.
    Workbench wb;
    MainWindow &w = *wb.window;
    wb.engine->setGeneratorFactory([](const std::string &, const nlohmann::json &, std::string *) {
        std::vector<kf::test::ScriptedIdea> ideas;
        for (int i = 0; i < 4; ++i)
            ideas.push_back({"idea" + std::to_string(i),
                             "Scripted idea " + std::to_string(i),
                             {kf::test::fakeKernel(1.0 / (i + 2))},
                             true,
                             std::nullopt});
        return std::make_shared<kf::test::ScriptedGenerator>(ideas);
    });
    w.show();
    wb.useWorker({KF_FAKE_WORKER});
    QTRY_VERIFY_WITH_TIMEOUT(wb.engine->gpu().checked, 30000);
    QTRY_VERIFY_WITH_TIMEOUT(w.problems()->currentProblem() != nullptr, 20000);
    SearchSettings s;
    s.rounds = 2;
    s.ideasPerRound = 2;
    s.implsPerIdea = 1;
    s.compileOnly = true;
    w.searchPanel()->setSettings(s);
    const QString file = wb.dir.filePath(QStringLiteral("compiled.kfsession"));
    QSignalSpy opened(wb.engine.get(), &Engine::sessionOpened);
    w.newSession(QStringLiteral("softmax"), file);
    QVERIFY(opened.wait(20000));
    QTRY_VERIFY(w.searchPanel()->startButton()->isEnabled());
    QSignalSpy progress(wb.engine.get(), &Engine::searchProgress);
    QSignalSpy finished(wb.engine.get(), &Engine::searchFinished);
    QTest::mouseClick(w.searchPanel()->startButton(), Qt::LeftButton);
    QVERIFY(finished.wait(120000) || finished.count() > 0);
    QVERIFY2(!finished.first().at(1).toBool(), qPrintable(finished.first().at(0).toString()));
    const QString summary = finished.first().at(2).toString();
    QVERIFY2(summary.contains(QStringLiteral("4 compiled and waiting for a GPU")), qPrintable(summary));
    QVERIFY(summary.contains(QStringLiteral("No kernel has been timed yet")));
    QCOMPARE(w.searchPanel()->statusText(), summary);
    // The estimate of the time left never came from the start-up alone.
    for (const QList<QVariant> &p : progress) {
        const auto sp = p.at(0).value<SearchProgress>();
        QVERIFY(sp.etaSeconds < 60);
    }
    // Its rounds wait for a GPU.
    QTRY_VERIFY_WITH_TIMEOUT(w.outlineModel()->rowCount() == 2 &&
                                 w.outlineModel()->index(1, 0).data(StatusRole).toString() ==
                                     QStringLiteral("needs gpu"),
                             10000);
    QCOMPARE(w.outlineModel()->index(0, 0).data(StatusRole).toString(), QStringLiteral("needs gpu"));
    auto *show = w.findChild<QComboBox *>(QStringLiteral("statusFilter"));
    show->setCurrentIndex(show->findText(QStringLiteral("Needs GPU")));
    QCOMPARE(w.outline()->model()->rowCount(), 2);
    show->setCurrentIndex(show->findText(QStringLiteral("Correct")));
    QCOMPARE(w.outline()->model()->rowCount(), 0);
}

void TestGuiSearch::modelFields_data()
{
    QTest::addColumn<QString>("generator");
    QTest::addColumn<QString>("url");
    QTest::addColumn<QString>("model");
    QTest::addColumn<int>("source");
    QTest::addColumn<QString>("key"); // the variable or the file
    QTest::addColumn<int>("field");   // ChoiceProblem::Field
    QTest::addColumn<QString>("message");
    const int env = int(KeySource::Environment), file = int(KeySource::File), none = int(KeySource::None);
    using F = ChoiceProblem::Field;
    const QString local = QStringLiteral("http://127.0.0.1:8000/v1");
    QTest::newRow("builtin") << "builtin"
                             << ""
                             << "" << env << "" << int(F::None) << "";
    QTest::newRow("openai, all set") << "openai" << local << "test-model" << env << "KF_TEST_KEY_SET" << int(F::None)
                                     << "";
    QTest::newRow("empty model") << "openai" << local << "" << env << "KF_TEST_KEY_SET" << int(F::Model)
                                 << "Model: is needed";
    QTest::newRow("no scheme") << "openai"
                               << "localhost:8000/v1"
                               << "m" << env << "KF_TEST_KEY_SET" << int(F::Endpoint)
                               << "Endpoint URL: must start with http:// or https://";
    QTest::newRow("no host") << "openai"
                             << "http:///v1"
                             << "m" << env << "KF_TEST_KEY_SET" << int(F::Endpoint)
                             << "Endpoint URL: \"http:///v1\" is not a URL with a host name";
    QTest::newRow("variable unset") << "openai" << local << "m" << env << "KF_TEST_KEY_UNSET" << int(F::Key)
                                    << "API key: the environment variable KF_TEST_KEY_UNSET is not set";
    QTest::newRow("default variable unset") << "anthropic"
                                            << ""
                                            << "claude-sonnet-4-5" << env << "" << int(F::Key)
                                            << "API key: the environment variable ANTHROPIC_API_KEY is not set";
    QTest::newRow("no key file") << "openai" << local << "m" << file << "/nonexistent/key" << int(F::Key)
                                 << "API key: there is no file /nonexistent/key";
    QTest::newRow("hosted without key") << "openai"
                                        << ""
                                        << "gpt-4.1" << none << "" << int(F::Key)
                                        << "API key: api.openai.com needs a key";
    QTest::newRow("local without key") << "openai"
                                       << "http://localhost:11434/v1"
                                       << "llama3" << none << "" << int(F::None) << "";
    // Where a key may go: the provider's variable only to the provider, no key in clear text.
    QTest::newRow("other server, no variable") << "openai" << local << "m" << env << "" << int(F::Key)
                                               << "API key: name the environment variable that holds the key for "
                                                  "127.0.0.1 (OPENAI_API_KEY is sent only to api.openai.com)";
    QTest::newRow("provider variable elsewhere") << "anthropic"
                                                 << "https://llm.example.org"
                                                 << "m" << env << "ANTHROPIC_API_KEY" << int(F::Key)
                                                 << "API key: names ANTHROPIC_API_KEY, the key for "
                                                    "https://api.anthropic.com, which is sent nowhere else";
    QTest::newRow("variable over plain HTTP")
        << "openai"
        << "http://192.0.2.10:8000/v1"
        << "m" << env << "KF_TEST_KEY_SET" << int(F::Key) << "API key: would send a key in clear text over plain HTTP";
    QTest::newRow("key file over plain HTTP") << "openai"
                                              << "http://192.0.2.10:8000/v1"
                                              << "m" << file << "/nonexistent/key" << int(F::Key)
                                              << "API key: would send a key in clear text over plain HTTP";
    QTest::newRow("plain HTTP without key") << "openai"
                                            << "http://192.0.2.10:8000/v1"
                                            << "m" << none << "" << int(F::None) << "";
}

void TestGuiSearch::modelFields()
{
    QFETCH(QString, generator);
    QFETCH(QString, url);
    QFETCH(QString, model);
    QFETCH(int, source);
    QFETCH(QString, key);
    QFETCH(int, field);
    QFETCH(QString, message);

    SearchPanel panel;
    panel.setStartBlocked({});
    auto *group = panel.findChild<QGroupBox *>(QStringLiteral("modelGroup"));
    auto *inline_ = panel.findChild<QLabel *>(QStringLiteral("generatorProblem"));
    QVERIFY(group && inline_);
    QVERIFY(!group->isVisibleTo(&panel)); // the built-in generator is the default
    QVERIFY(panel.startButton()->isEnabled());

    GeneratorChoice c;
    c.name = generator;
    c.baseUrl = url;
    c.model = model;
    c.keySource = KeySource(source);
    (c.keySource == KeySource::File ? c.keyFile : c.keyEnv) = key;
    typeChoice(panel, c);
    QCOMPARE(panel.generator(), generator);
    QCOMPARE(group->isVisibleTo(&panel), generator != QLatin1String("builtin"));
    if (generator != QLatin1String("builtin")) {
        QCOMPARE(panel.generatorChoice(), c);
        // Only the field of the chosen key source shows.
        QCOMPARE(panel.findChild<QLineEdit *>(QStringLiteral("keyEnv"))->isVisibleTo(&panel),
                 c.keySource == KeySource::Environment);
        QCOMPARE(panel.findChild<QLineEdit *>(QStringLiteral("keyFile"))->isVisibleTo(&panel),
                 c.keySource == KeySource::File);
    }
    const bool ok = field == int(ChoiceProblem::Field::None);
    QCOMPARE(panel.problem().isEmpty(), ok);
    QVERIFY2(message.isEmpty() || panel.problem().startsWith(message), qPrintable(panel.problem()));
    QCOMPARE(inline_->isVisibleTo(&panel), !ok);
    QCOMPARE(inline_->text(), panel.problem());
    QCOMPARE(panel.startButton()->isEnabled(), ok);
    if (!ok)
        QVERIFY(panel.startButton()->toolTip().contains(panel.problem()));

    // The built-in generator hides the fields, and nothing in them holds Start back.
    typeChoice(panel, GeneratorChoice{});
    QVERIFY(!group->isVisibleTo(&panel));
    QVERIFY(panel.problem().isEmpty());
    QVERIFY(panel.startButton()->isEnabled());
    // The fields are kept for when the generator is chosen again.
    if (generator != QLatin1String("builtin")) {
        panel.setGenerator(generator);
        QCOMPARE(panel.generatorChoice(), c);
        QCOMPARE(panel.startButton()->isEnabled(), ok);
    }
}

void TestGuiSearch::modelFieldsPersist()
{
    Workbench wb;
    const QString keyFile = wb.dir.filePath(QStringLiteral("key.txt"));
    {
        QFile f(keyFile);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("sk-test-secret-in-a-file\n");
    }
    GeneratorChoice openai{.name = QStringLiteral("openai"),
                           .baseUrl = QStringLiteral("http://127.0.0.1:8000/v1"),
                           .model = QStringLiteral("test-model"),
                           .keySource = KeySource::File,
                           .keyEnv = {},
                           .keyFile = keyFile};
    GeneratorChoice anthropic{.name = QStringLiteral("anthropic"),
                              .baseUrl = {},
                              .model = QStringLiteral("claude-sonnet-4-5"),
                              .keySource = KeySource::Environment,
                              .keyEnv = QStringLiteral("KF_TEST_KEY_SET"),
                              .keyFile = {}};
    SearchSettings budgets;
    budgets.tokenBudget = 2'000'000;
    budgets.costBudget = 12.5;
    budgets.compileOnly = true;
    SearchPanel *panel = wb.window->searchPanel();
    panel->setSettings(budgets);
    typeChoice(*panel, anthropic);
    typeChoice(*panel, openai);
    QVERIFY2(panel->problem().isEmpty(), qPrintable(panel->problem()));
    wb.window->show();
    QVERIFY(wb.window->close()); // saves the settings

    const GeneratorChoice savedOpenai = wb.settings->generatorChoice(QStringLiteral("openai"));
    QCOMPARE(savedOpenai, openai);
    QCOMPARE(wb.settings->generatorChoice(QStringLiteral("anthropic")), anthropic);
    QCOMPARE(wb.settings->generator(), QStringLiteral("openai"));
    QCOMPARE(wb.settings->searchSettings().tokenBudget, budgets.tokenBudget);
    QCOMPARE(wb.settings->searchSettings().costBudget, budgets.costBudget);
    QVERIFY(wb.settings->searchSettings().compileOnly);
    // Where the key is, never the key.
    wb.window.reset();
    wb.settings.reset(); // QSettings writes its file now
    QFile ini(wb.dir.filePath(QStringLiteral("settings.ini")));
    QVERIFY(ini.open(QIODevice::ReadOnly));
    const QByteArray text = ini.readAll();
    QVERIFY(text.contains("test-model"));
    QVERIFY(!text.contains("sk-test"));

    // A new window shows them again.
    wb.settings = std::make_unique<Settings>(wb.dir.filePath(QStringLiteral("settings.ini")), nullptr);
    wb.window = std::make_unique<MainWindow>(wb.settings.get(), wb.engine.get());
    panel = wb.window->searchPanel();
    QCOMPARE(panel->generator(), QStringLiteral("openai"));
    QCOMPARE(panel->generatorChoice(), openai);
    QCOMPARE(panel->generatorChoice(QStringLiteral("anthropic")), anthropic);
    QCOMPARE(panel->settings().tokenBudget, budgets.tokenBudget);
    QCOMPARE(panel->settings().costBudget, budgets.costBudget);
    QVERIFY(panel->settings().compileOnly);
}

void TestGuiSearch::modelSettingsReachTheGenerator()
{
    Workbench wb;
    EngineConfig config;
    config.workerArgv = {KF_FAKE_WORKER};
    wb.engine->setConfig(config);
    struct Seen {
        std::mutex mutex;
        std::string name;
        nlohmann::json settings;
    };
    auto seen = std::make_shared<Seen>();
    wb.engine->setGeneratorFactory([seen](const std::string &name, const nlohmann::json &settings, std::string *) {
        std::lock_guard lock(seen->mutex);
        seen->name = name;
        seen->settings = settings;
        return std::make_shared<kf::test::ScriptedGenerator>(std::vector<kf::test::ScriptedIdea>{
            {"idea", "Scripted idea", {kf::test::fakeKernel(0.5)}, true, std::nullopt}});
    });
    wb.engine->probeGpu();
    QTRY_VERIFY_WITH_TIMEOUT(wb.engine->gpu().present, 30000);

    const QString keyFile = wb.dir.filePath(QStringLiteral("key.txt"));
    {
        QFile f(keyFile);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("  sk-test-secret-in-a-file\n");
    }
    const GeneratorChoice choice{.name = QStringLiteral("openai"),
                                 .baseUrl = QStringLiteral("http://127.0.0.1:9/v1"),
                                 .model = QStringLiteral("test-model"),
                                 .keySource = KeySource::File,
                                 .keyEnv = {},
                                 .keyFile = keyFile};
    const QString file = wb.dir.filePath(QStringLiteral("llm.kfsession"));
    QVERIFY(newSession(wb, file, choice));
    QCOMPARE(qs(wb.engine->session()->meta.generator), QStringLiteral("openai"));
    {
        // What an earlier run stored: kept where the panel says nothing, as with kernelforge-cli --resume.
        auto store = SessionStore::open(file.toStdString());
        QVERIFY(store);
        QVERIFY(store->setMetaJson(session_meta::GeneratorSettings,
                                   {{"model", "old-model"}, {"temperature", 0.25}, {"key_env", "OTHER_KEY"}}));
    }
    QTRY_VERIFY(wb.window->searchPanel()->startButton()->isEnabled());
    QSignalSpy finished(wb.engine.get(), &Engine::searchFinished);
    QTest::mouseClick(wb.window->searchPanel()->startButton(), Qt::LeftButton);
    QVERIFY2(finished.wait(60000) || finished.count() > 0, qPrintable(wb.window->console()->toPlainText()));
    QVERIFY2(!finished.first().at(1).toBool(), qPrintable(finished.first().at(0).toString()));

    std::lock_guard lock(seen->mutex);
    QCOMPARE(qs(seen->name), QStringLiteral("openai"));
    QCOMPARE(qs(seen->settings.value("base_url", "")), QStringLiteral("http://127.0.0.1:9/v1"));
    QCOMPARE(qs(seen->settings.value("model", "")), QStringLiteral("test-model"));
    QCOMPARE(seen->settings.value("temperature", 0.0), 0.25);
    QCOMPARE(qs(seen->settings.value("api_key", "")), QStringLiteral("sk-test-secret-in-a-file"));
    QFile ini(wb.dir.filePath(QStringLiteral("settings.ini")));
    wb.window.reset();
    wb.settings.reset(); // QSettings writes its file now
    QVERIFY(ini.open(QIODevice::ReadOnly));
    QVERIFY(!ini.readAll().contains("sk-test"));
}

void TestGuiSearch::unreachableServerIsReported()
{
    Workbench wb;
    EngineConfig config;
    config.workerArgv = {KF_FAKE_WORKER};
    wb.engine->setConfig(config);
    wb.engine->probeGpu(); // the real generator factory, as the application has it
    QTRY_VERIFY_WITH_TIMEOUT(wb.engine->gpu().present, 30000);
    const quint16 port = closedPort();
    QVERIFY(port != 0);
    const QString url = QStringLiteral("http://127.0.0.1:%1/v1").arg(port);
    const GeneratorChoice choice{.name = QStringLiteral("openai"),
                                 .baseUrl = url,
                                 .model = QStringLiteral("test-model"),
                                 .keySource = KeySource::None,
                                 .keyEnv = {},
                                 .keyFile = {}};
    QVERIFY(newSession(wb, wb.dir.filePath(QStringLiteral("down.kfsession")), choice));
    QTRY_VERIFY(wb.window->searchPanel()->startButton()->isEnabled());
    QSignalSpy finished(wb.engine.get(), &Engine::searchFinished);
    QTest::mouseClick(wb.window->searchPanel()->startButton(), Qt::LeftButton);
    QVERIFY2(finished.wait(60000) || finished.count() > 0, qPrintable(wb.window->console()->toPlainText()));
    QVERIFY(finished.first().at(1).toBool()); // failed
    const QString expected = QStringLiteral("no server at http://127.0.0.1:%1 (connection refused)").arg(port);
    QVERIFY2(finished.first().at(0).toString().contains(expected), qPrintable(finished.first().at(0).toString()));
    MessageBar *bar = wb.window->messageBar();
    QVERIFY(bar->isVisible());
    QCOMPARE(bar->kind(), MessageBar::Kind::Error);
    QVERIFY2(bar->text().contains(expected), qPrintable(bar->text()));
    QVERIFY(wb.window->console()->toPlainText().contains(QStringLiteral("Search failed")));
}

QTEST_MAIN(TestGuiSearch)
#include "test_gui_search.moc"
