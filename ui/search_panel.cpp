#include "search_panel.h"

#include "gen/factory.h"
#include "model/format.h"

#include <QAction>
#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QStyle>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>
#include <limits>

namespace kf::ui {

namespace {

QSpinBox *spin(int lo, int hi, const QString &tip, QWidget *parent)
{
    auto *s = new QSpinBox(parent);
    s->setRange(lo, hi);
    s->setToolTip(tip);
    return s;
}

QString eta(double seconds)
{
    if (seconds < 0)
        return QObject::tr("estimating…");
    const int s = int(seconds + 0.5);
    return s >= 3600 ? QObject::tr("%1 h %2 min left").arg(s / 3600).arg((s % 3600) / 60)
        : s >= 60    ? QObject::tr("%1 min %2 s left").arg(s / 60).arg(s % 60)
                     : QObject::tr("%1 s left").arg(s);
}

} // namespace

SearchPanel::SearchPanel(QWidget *parent) : QWidget(parent)
{
    m_generator = new QComboBox(this);
    m_generator->setObjectName(QStringLiteral("generator"));
    for (const std::string &name : generatorNames())
        m_generator->addItem(qs(name));
    m_generator->setToolTip(tr("Who proposes ideas and writes kernels; builtin needs no network"));
    m_rounds = spin(1, 10000, tr("Total rounds of the session; a continued session counts the rounds it has"), this);
    m_ideas = spin(1, 64, tr("Ideas asked for per round"), this);
    m_impls = spin(1, 64, tr("Implementations asked for per idea"), this);
    m_topK = spin(1, 64, tr("The fastest correct kernels given to the generator"), this);
    m_bank = spin(1, 256, tr("Kernels kept for seeding, one per idea"), this);
    m_policy = new QComboBox(this);
    m_policy->addItem(tr("the problem's"), QString());
    m_policy->addItem(tr("strict (1e-4)"), QStringLiteral("strict"));
    m_policy->addItem(tr("loose (1e-2)"), QStringLiteral("loose"));
    m_trials = spin(1, 100, tr("Verification trials per candidate, each on fresh inputs"), this);
    m_timingTrials = spin(1, 10000, tr("Timed runs per correct candidate (and for the eager baseline)"), this);
    m_budget = new QDoubleSpinBox(this);
    m_budget->setRange(0, 7 * 24 * 3600);
    m_budget->setDecimals(0);
    m_budget->setSuffix(tr(" s"));
    m_budget->setSpecialValueText(tr("none"));
    m_budget->setToolTip(tr("Wall-clock limit of this run; the search stops at once when it is spent"));
    m_repairs = spin(0, 10, tr("Repair attempts per failed candidate"), this);
    m_compileOnly = new QCheckBox(tr("Compile only"), this);
    m_compileOnly->setObjectName(QStringLiteral("compileOnly"));
    m_compileOnly->setToolTip(tr("Run the rounds up to compilation with NVRTC; candidates that compile wait for a GPU. "
                                 "Needs no GPU."));
    m_worker = new QLineEdit(this);
    m_worker->setPlaceholderText(tr("local kernelforge-worker"));
    m_worker->setToolTip(tr("The worker command, e.g. ssh gpuhost kernelforge-worker"));

    auto *form = new QFormLayout;
    form->addRow(tr("Generator"), m_generator);
    form->addRow(buildModelGroup());
    form->addRow(tr("Rounds"), m_rounds);
    form->addRow(tr("Ideas per round"), m_ideas);
    form->addRow(tr("Implementations per idea"), m_impls);
    form->addRow(tr("Top-k"), m_topK);
    form->addRow(tr("Bank size"), m_bank);
    form->addRow(tr("Tolerance"), m_policy);
    form->addRow(tr("Trials"), m_trials);
    form->addRow(tr("Timed runs"), m_timingTrials);
    form->addRow(tr("Time budget"), m_budget);
    form->addRow(tr("Repairs"), m_repairs);
    form->addRow(QString(), m_compileOnly);
    form->addRow(tr("Worker"), m_worker);

    m_start = new QPushButton(tr("Start"), this);
    m_start->setObjectName(QStringLiteral("startSearch"));
    m_cancel = new QPushButton(tr("Cancel"), this);
    m_cancel->setObjectName(QStringLiteral("cancelSearch"));
    m_cancel->setToolTip(tr("Stop the search now; everything evaluated stays in the session"));
    m_progress = new QProgressBar(this);
    m_progress->setRange(0, 1000);
    m_progress->setTextVisible(false);
    m_progress->hide(); // until a search runs
    m_status = new QLabel(this);
    m_status->setObjectName(QStringLiteral("searchStatus"));
    m_status->setWordWrap(true);
    m_status->setTextInteractionFlags(Qt::TextSelectableByMouse);
    auto *buttons = new QHBoxLayout;
    buttons->addWidget(m_start);
    buttons->addWidget(m_cancel);

    auto *l = new QVBoxLayout(this);
    l->addLayout(form);
    l->addLayout(buttons);
    l->addWidget(m_progress);
    l->addWidget(m_status);
    l->addStretch();

    connect(m_start, &QPushButton::clicked, this, &SearchPanel::startRequested);
    connect(m_cancel, &QPushButton::clicked, this, &SearchPanel::cancelRequested);
    connect(m_worker, &QLineEdit::editingFinished, this, [this] { emit workerCommandChanged(workerCommand()); });
    connect(m_compileOnly, &QCheckBox::toggled, this, &SearchPanel::inputChanged);
    connect(m_generator, &QComboBox::currentIndexChanged, this, &SearchPanel::onGeneratorChanged);
    for (const std::string &name : generatorNames()) {
        GeneratorChoice c;
        c.name = qs(name);
        if (c.asksModel())
            m_choices.insert(c.name, c);
    }
    setSettings({});
    onGeneratorChanged();
    setRunning(false);
}

QWidget *SearchPanel::buildModelGroup()
{
    m_modelGroup = new QGroupBox(tr("Language model"), this);
    m_modelGroup->setObjectName(QStringLiteral("modelGroup"));
    auto mark = [this](QLineEdit *e) {
        QAction *a = e->addAction(style()->standardIcon(QStyle::SP_MessageBoxWarning), QLineEdit::TrailingPosition);
        a->setVisible(false);
        return a;
    };
    m_baseUrl = new QLineEdit(m_modelGroup);
    m_baseUrl->setObjectName(QStringLiteral("baseUrl"));
    m_baseUrl->setToolTip(tr("The server's API address: OpenAI, vLLM, SGLang, llama.cpp, Ollama (…/v1) or Anthropic; "
                             "empty for the provider's own"));
    m_urlMark = mark(m_baseUrl);
    m_model = new QLineEdit(m_modelGroup);
    m_model->setObjectName(QStringLiteral("model"));
    m_model->setToolTip(tr("The model's name as the server knows it"));
    m_modelMark = mark(m_model);
    m_keySource = new QComboBox(m_modelGroup);
    m_keySource->setObjectName(QStringLiteral("keySource"));
    m_keySource->addItem(tr("Environment variable"), int(KeySource::Environment));
    m_keySource->addItem(tr("Key file"), int(KeySource::File));
    m_keySource->addItem(tr("None (local server)"), int(KeySource::None));
    m_keySource->setToolTip(tr("Where the key is read from when a search starts; the key itself is never saved"));
    m_keyEnv = new QLineEdit(m_modelGroup);
    m_keyEnv->setObjectName(QStringLiteral("keyEnv"));
    m_keyEnv->setToolTip(tr("The environment variable that holds the key. Left empty, OPENAI_API_KEY or "
                            "ANTHROPIC_API_KEY is read, and only for the provider's own API; any other server "
                            "needs its variable named here"));
    m_keyEnvMark = mark(m_keyEnv);
    m_keyFile = new QLineEdit(m_modelGroup);
    m_keyFile->setObjectName(QStringLiteral("keyFile"));
    m_keyFile->setPlaceholderText(tr("file holding the key"));
    m_keyFile->setToolTip(tr("A file whose only content is the key; it is read when a search starts"));
    m_keyFileMark = mark(m_keyFile);
    m_browseKey = new QToolButton(m_modelGroup);
    m_browseKey->setText(tr("…"));
    m_browseKey->setToolTip(tr("Choose the key file"));
    m_tokenBudget = new QSpinBox(m_modelGroup);
    m_tokenBudget->setObjectName(QStringLiteral("tokenBudget"));
    m_tokenBudget->setRange(0, std::numeric_limits<int>::max());
    m_tokenBudget->setSingleStep(100000);
    m_tokenBudget->setGroupSeparatorShown(true);
    m_tokenBudget->setSpecialValueText(tr("none"));
    m_tokenBudget->setSuffix(tr(" tokens"));
    m_tokenBudget->setToolTip(
        tr("Prompt and completion tokens of the whole session; the search stops when they are spent"));
    m_costBudget = new QDoubleSpinBox(m_modelGroup);
    m_costBudget->setObjectName(QStringLiteral("costBudget"));
    m_costBudget->setRange(0, 1e6);
    m_costBudget->setDecimals(2);
    m_costBudget->setSpecialValueText(tr("none"));
    m_costBudget->setSuffix(tr(" USD"));
    m_costBudget->setToolTip(tr("Cost of the whole session by the price table (llm/prices.json, in USD); a model "
                                "missing from the table costs nothing"));
    m_fieldProblem = new QLabel(m_modelGroup);
    m_fieldProblem->setObjectName(QStringLiteral("generatorProblem"));
    m_fieldProblem->setWordWrap(true);
    m_fieldProblem->setStyleSheet(QStringLiteral("color: #b3261e;"));
    m_fieldProblem->hide();

    auto *keyRow = new QHBoxLayout;
    keyRow->setContentsMargins(0, 0, 0, 0);
    keyRow->addWidget(m_keyEnv, 1);
    keyRow->addWidget(m_keyFile, 1);
    keyRow->addWidget(m_browseKey);
    auto *form = new QFormLayout(m_modelGroup);
    form->addRow(tr("Endpoint URL"), m_baseUrl);
    form->addRow(tr("Model"), m_model);
    form->addRow(tr("API key"), m_keySource);
    form->addRow(QString(), keyRow);
    m_keyRow = keyRow;
    m_modelForm = form;
    form->addRow(tr("Token budget"), m_tokenBudget);
    form->addRow(tr("Cost budget"), m_costBudget);
    form->addRow(m_fieldProblem);

    for (QLineEdit *e : {m_baseUrl, m_model, m_keyEnv, m_keyFile})
        connect(e, &QLineEdit::textChanged, this, &SearchPanel::check);
    connect(m_keySource, &QComboBox::currentIndexChanged, this, [this] {
        showKeySource();
        check();
    });
    connect(m_browseKey, &QToolButton::clicked, this, [this] {
        const QString f = QFileDialog::getOpenFileName(this, tr("The file holding the key"), m_keyFile->text());
        if (!f.isEmpty())
            m_keyFile->setText(f);
    });
    return m_modelGroup;
}

void SearchPanel::onGeneratorChanged()
{
    if (m_choices.contains(m_shown))
        m_choices[m_shown] = choiceOnScreen();
    m_shown = generator();
    const GeneratorChoice c = m_choices.value(m_shown, GeneratorChoice::named(m_shown));
    m_modelGroup->setVisible(c.asksModel());
    if (c.asksModel()) {
        m_baseUrl->setPlaceholderText(c.defaultBaseUrl());
        m_model->setPlaceholderText(m_shown == QLatin1String("anthropic") ? tr("e.g. claude-sonnet-4-5")
                                                                          : tr("e.g. gpt-4.1"));
        showChoice(c);
    }
    check();
}

void SearchPanel::showChoice(const GeneratorChoice &c)
{
    m_showing = true; // one check after all fields are set, not one per field
    m_baseUrl->setText(c.baseUrl);
    m_model->setText(c.model);
    m_keyEnv->setText(c.keyEnv);
    m_keyFile->setText(c.keyFile);
    m_keySource->setCurrentIndex(m_keySource->findData(int(c.keySource)));
    showKeySource();
    m_showing = false;
}

void SearchPanel::showKeySource()
{
    const auto source = KeySource(m_keySource->currentData().toInt());
    // No empty row for "none". Showing the row shows all of its widgets, so it comes first.
    m_modelForm->setRowVisible(m_keyRow, source != KeySource::None);
    m_keyEnv->setVisible(source == KeySource::Environment);
    m_keyFile->setVisible(source == KeySource::File);
    m_browseKey->setVisible(source == KeySource::File);
}

GeneratorChoice SearchPanel::choiceOnScreen() const
{
    GeneratorChoice c;
    c.name = m_shown;
    c.baseUrl = m_baseUrl->text().trimmed();
    c.model = m_model->text().trimmed();
    c.keySource = KeySource(m_keySource->currentData().toInt());
    c.keyEnv = m_keyEnv->text().trimmed();
    c.keyFile = m_keyFile->text().trimmed();
    return c;
}

GeneratorChoice SearchPanel::generatorChoice() const
{
    if (m_choices.contains(m_shown))
        return choiceOnScreen();
    GeneratorChoice c;
    c.name = generator();
    return c;
}

GeneratorChoice SearchPanel::generatorChoice(const QString &name) const
{
    if (name == m_shown)
        return generatorChoice();
    return m_choices.value(name, GeneratorChoice::named(name));
}

void SearchPanel::setGeneratorChoice(const GeneratorChoice &c)
{
    if (!c.asksModel())
        return;
    m_choices[c.name] = c;
    if (c.name == m_shown) {
        showChoice(c);
        check();
    }
}

QList<GeneratorChoice> SearchPanel::generatorChoices() const
{
    QList<GeneratorChoice> out;
    for (const std::string &name : generatorNames())
        if (m_choices.contains(qs(name)))
            out << (qs(name) == m_shown ? choiceOnScreen() : m_choices.value(qs(name)));
    return out;
}

void SearchPanel::check()
{
    if (m_showing)
        return;
    const GeneratorChoice choice = generatorChoice();
    // The variable an empty key field stands for changes with the URL: none for other servers.
    if (choice.asksModel())
        m_keyEnv->setPlaceholderText(choice.impliedKeyEnv().isEmpty() ? tr("the variable holding this server's key")
                                                                      : choice.impliedKeyEnv());
    m_problem = checkChoice(choice);
    using Field = ChoiceProblem::Field;
    m_urlMark->setVisible(m_problem.field == Field::Endpoint);
    m_modelMark->setVisible(m_problem.field == Field::Model);
    m_keyEnvMark->setVisible(m_problem.field == Field::Key);
    m_keyFileMark->setVisible(m_problem.field == Field::Key);
    for (QAction *a : {m_urlMark, m_modelMark, m_keyEnvMark, m_keyFileMark})
        a->setToolTip(m_problem.message);
    m_fieldProblem->setText(m_problem.message);
    m_fieldProblem->setVisible(bool(m_problem));
    updateStart();
    emit inputChanged();
}

SearchSettings SearchPanel::settings() const
{
    SearchSettings s;
    s.rounds = m_rounds->value();
    s.ideasPerRound = m_ideas->value();
    s.implsPerIdea = m_impls->value();
    s.topK = m_topK->value();
    s.bankSize = m_bank->value();
    if (auto p = parsePolicy(m_policy->currentData().toString().toStdString()))
        s.policy = *p;
    s.trials = m_trials->value();
    s.timingTrials = m_timingTrials->value();
    s.timeBudgetSeconds = m_budget->value();
    s.repairs = m_repairs->value();
    // The budgets count a model's tokens and cost; with the built-in generator they count nothing.
    s.tokenBudget = m_tokenBudget->value();
    s.costBudget = m_costBudget->value();
    s.compileOnly = m_compileOnly->isChecked();
    return s;
}

void SearchPanel::setSettings(const SearchSettings &s)
{
    m_rounds->setValue(s.rounds);
    m_ideas->setValue(s.ideasPerRound);
    m_impls->setValue(s.implsPerIdea);
    m_topK->setValue(s.topK);
    m_bank->setValue(s.bankSize);
    m_policy->setCurrentIndex(s.policy ? m_policy->findData(qs(toString(*s.policy))) : 0);
    m_trials->setValue(s.trials);
    m_timingTrials->setValue(s.timingTrials);
    m_budget->setValue(s.timeBudgetSeconds);
    m_repairs->setValue(s.repairs);
    m_tokenBudget->setValue(int(std::min<std::int64_t>(s.tokenBudget, m_tokenBudget->maximum())));
    m_costBudget->setValue(s.costBudget);
    m_compileOnly->setChecked(s.compileOnly);
}

QString SearchPanel::generator() const { return m_generator->currentText(); }

void SearchPanel::setGenerator(const QString &g)
{
    const int i = m_generator->findText(g);
    if (i >= 0)
        m_generator->setCurrentIndex(i);
}

QString SearchPanel::workerCommand() const { return m_worker->text().trimmed(); }
void SearchPanel::setWorkerCommand(const QString &c) { m_worker->setText(c); }

void SearchPanel::setStartBlocked(const QString &reason)
{
    m_blocked = reason;
    setRunning(m_running);
}

void SearchPanel::setRunning(bool running)
{
    m_running = running;
    updateStart();
    m_cancel->setEnabled(running);
    if (!running && !m_blocked.isEmpty())
        m_status->setText(tr("Start is unavailable: %1").arg(m_blocked));
    else if (!running && m_status->text().startsWith(tr("Start is unavailable")))
        m_status->clear();
}

void SearchPanel::updateStart()
{
    // The window's reason (no session, no GPU) comes first; the fields' own shows beside them.
    const QString why = !m_blocked.isEmpty() ? m_blocked : m_problem.message;
    m_start->setEnabled(!m_running && why.isEmpty());
    m_start->setToolTip(why.isEmpty() ? tr("Run the search into the open session (F5)")
                                      : tr("Start is unavailable: %1").arg(why));
}

void SearchPanel::showProgress(const SearchProgress &p)
{
    m_progress->show();
    m_progress->setValue(int(p.fraction * 1000));
    m_status->setText(tr("%1 of about %2 candidates judged · %3").arg(p.done).arg(p.total).arg(eta(p.etaSeconds)));
}

void SearchPanel::showFinished(const QString &summary, bool failed)
{
    if (!failed)
        m_progress->setValue(m_progress->maximum());
    m_status->setText(failed ? tr("The search stopped with an error: %1").arg(summary) : summary);
}

void SearchPanel::clearFinished()
{
    if (m_running)
        return;
    m_progress->hide();
    m_progress->setValue(0);
    m_status->setText(m_blocked.isEmpty() ? QString() : tr("Start is unavailable: %1").arg(m_blocked));
}

QString SearchPanel::statusText() const { return m_status->text(); }

} // namespace kf::ui
