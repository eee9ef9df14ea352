#pragma once
// Search configuration and control: generator, rounds, ideas per round, implementations per idea,
// top-k, bank, tolerance policy, trials, timing runs, time budget, repairs, compile-only and the
// worker command; for a language-model generator its endpoint, model, key source and token and
// cost budgets, checked as they are typed; Start and Cancel, and a progress bar with an ETA.
#include "engine.h"
#include "generator_choice.h"
#include "search/settings.h"

#include <QHash>
#include <QWidget>

class QAction;
class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QFormLayout;
class QGroupBox;
class QHBoxLayout;
class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QToolButton;

namespace kf::ui {

class SearchPanel : public QWidget {
    Q_OBJECT
public:
    explicit SearchPanel(QWidget *parent = nullptr);

    SearchSettings settings() const;
    void setSettings(const SearchSettings &);
    QString generator() const;
    void setGenerator(const QString &);
    // The current generator with its fields; the fields the panel holds for `name`.
    GeneratorChoice generatorChoice() const;
    GeneratorChoice generatorChoice(const QString &name) const;
    // Sets the fields of `c.name`'s generator (shown now if it is the current one, else when it is
    // chosen), without choosing it.
    void setGeneratorChoice(const GeneratorChoice &c);
    // The fields of every language-model generator, as they would be saved.
    QList<GeneratorChoice> generatorChoices() const;
    // Why the generator's fields cannot work, naming the field ("" when they can).
    QString problem() const { return m_problem.message; }
    QString workerCommand() const;
    void setWorkerCommand(const QString &);

    // Why Start is unavailable ("" when it is available).
    void setStartBlocked(const QString &reason);
    void setRunning(bool);
    void showProgress(const SearchProgress &);
    // How the last run ended: what it found, or why it failed.
    void showFinished(const QString &summary, bool failed);
    // Forget the last run's progress and message (another session is shown).
    void clearFinished();
    QString statusText() const;
    QPushButton *startButton() const { return m_start; }
    QPushButton *cancelButton() const { return m_cancel; }
    QProgressBar *progressBar() const { return m_progress; }

signals:
    void startRequested();
    void cancelRequested();
    void workerCommandChanged(const QString &);
    void inputChanged(); // the generator, its fields or compile-only: what Start depends on

private:
    QWidget *buildModelGroup();
    void showChoice(const GeneratorChoice &);
    void showKeySource();
    GeneratorChoice choiceOnScreen() const;
    void onGeneratorChanged();
    void check();
    void updateStart();

    QComboBox *m_generator, *m_policy;
    QSpinBox *m_rounds, *m_ideas, *m_impls, *m_topK, *m_bank, *m_trials, *m_timingTrials, *m_repairs;
    QDoubleSpinBox *m_budget;
    QCheckBox *m_compileOnly;
    QLineEdit *m_worker;
    // The language-model fields, hidden for the built-in generator.
    QGroupBox *m_modelGroup;
    QLineEdit *m_baseUrl, *m_model, *m_keyEnv, *m_keyFile;
    QComboBox *m_keySource;
    QFormLayout *m_modelForm;
    QHBoxLayout *m_keyRow; // the variable, or the file and its button
    QToolButton *m_browseKey;
    QSpinBox *m_tokenBudget;
    QDoubleSpinBox *m_costBudget;
    QLabel *m_fieldProblem;
    QAction *m_urlMark, *m_modelMark, *m_keyEnvMark, *m_keyFileMark;
    QHash<QString, GeneratorChoice> m_choices; // the fields of the generators not shown now
    QString m_shown;                           // the generator whose fields are on screen
    ChoiceProblem m_problem;
    bool m_showing = false;
    QPushButton *m_start, *m_cancel;
    QProgressBar *m_progress;
    QLabel *m_status;
    QString m_blocked;
    bool m_running = false;
};

} // namespace kf::ui
