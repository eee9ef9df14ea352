#include "search_panel.h"

#include "gen/factory.h"
#include "model/format.h"

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QVBoxLayout>

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
         : s >= 60   ? QObject::tr("%1 min %2 s left").arg(s / 60).arg(s % 60)
                     : QObject::tr("%1 s left").arg(s);
}

} // namespace

SearchPanel::SearchPanel(QWidget *parent) : QWidget(parent)
{
    m_generator = new QComboBox(this);
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
    m_worker = new QLineEdit(this);
    m_worker->setPlaceholderText(tr("local kernelforge-worker"));
    m_worker->setToolTip(tr("The worker command, e.g. ssh gpuhost kernelforge-worker"));

    auto *form = new QFormLayout;
    form->addRow(tr("Generator"), m_generator);
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
    m_status->setWordWrap(true);
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
    setSettings({});
    setRunning(false);
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
    m_start->setEnabled(!running && m_blocked.isEmpty());
    m_start->setToolTip(m_blocked.isEmpty() ? tr("Run the search into the open session (F5)")
                                            : tr("Start is unavailable: %1").arg(m_blocked));
    m_cancel->setEnabled(running);
    if (!running && !m_blocked.isEmpty())
        m_status->setText(tr("Start is unavailable: %1").arg(m_blocked));
    else if (!running && m_status->text().startsWith(tr("Start is unavailable")))
        m_status->clear();
}

void SearchPanel::showProgress(const SearchProgress &p)
{
    m_progress->show();
    m_progress->setValue(int(p.fraction * 1000));
    m_status->setText(tr("%1 of about %2 candidates judged · %3").arg(p.done).arg(p.total).arg(eta(p.etaSeconds)));
}

void SearchPanel::showFinished(const QString &reason, bool failed)
{
    if (!failed)
        m_progress->setValue(m_progress->maximum());
    m_status->setText(failed ? tr("The search stopped with an error: %1").arg(reason) : tr("Stopped: %1").arg(reason));
}

} // namespace kf::ui
