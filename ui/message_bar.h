#pragma once
// An inline message above the views (errors name what and where), instead of modal boxes: it
// stays until closed, or closes itself after a while for information.
#include <QFrame>

class QLabel;
class QTimer;
class QToolButton;

namespace kf::ui {

class MessageBar : public QFrame {
    Q_OBJECT
public:
    enum class Kind { Info, Warning, Error };
    explicit MessageBar(QWidget *parent = nullptr);

    void showMessage(Kind, const QString &text, int autoCloseMs = 0);
    void setClosable(bool);
    QString text() const;
    Kind kind() const { return m_kind; }

private:
    QLabel *m_icon, *m_text;
    QToolButton *m_close;
    QTimer *m_timer;
    Kind m_kind = Kind::Info;
};

} // namespace kf::ui
