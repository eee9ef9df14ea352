#include "message_bar.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QStyle>
#include <QTimer>
#include <QToolButton>

namespace kf::ui {

MessageBar::MessageBar(QWidget *parent) : QFrame(parent)
{
    setObjectName(QStringLiteral("messageBar"));
    m_icon = new QLabel(this);
    m_text = new QLabel(this);
    m_text->setWordWrap(true);
    m_text->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_close = new QToolButton(this);
    m_close->setAutoRaise(true);
    m_close->setIcon(style()->standardIcon(QStyle::SP_TitleBarCloseButton));
    m_close->setToolTip(tr("Close"));
    auto *l = new QHBoxLayout(this);
    l->setContentsMargins(8, 4, 4, 4);
    l->addWidget(m_icon);
    l->addWidget(m_text, 1);
    l->addWidget(m_close, 0, Qt::AlignTop);
    m_timer = new QTimer(this);
    m_timer->setSingleShot(true);
    connect(m_timer, &QTimer::timeout, this, &QWidget::hide);
    connect(m_close, &QToolButton::clicked, this, &QWidget::hide);
    hide();
}

void MessageBar::showMessage(Kind kind, const QString &text, int autoCloseMs)
{
    m_kind = kind;
    static const char *colors[] = {"#e8f1fb; border: 1px solid #8fb3dd", "#fff6dc; border: 1px solid #e0c060",
                                   "#fde8e8; border: 1px solid #e08080"};
    setStyleSheet(QStringLiteral("#messageBar { background: %1; border-radius: 4px; } QLabel { color: #202020; }")
                      .arg(QLatin1String(colors[int(kind)])));
    const QStyle::StandardPixmap icon = kind == Kind::Error ? QStyle::SP_MessageBoxCritical
        : kind == Kind::Warning                             ? QStyle::SP_MessageBoxWarning
                                                            : QStyle::SP_MessageBoxInformation;
    m_icon->setPixmap(style()->standardIcon(icon).pixmap(20, 20));
    m_text->setText(text);
    m_timer->stop();
    if (autoCloseMs > 0)
        m_timer->start(autoCloseMs);
    show();
}

void MessageBar::setClosable(bool c) { m_close->setVisible(c); }
QString MessageBar::text() const { return isVisible() ? m_text->text() : QString(); }

} // namespace kf::ui
