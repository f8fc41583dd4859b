// Mail for organizations (issue 41 item 3). SMTP (SMTP_URL, nodemailer) is not wired yet: without it
// nothing is sent and the invitation link is answered to the inviter to pass on (`mailed: false`).
export async function sendInvitationMail(_to: string, _msg: { org: string; inviter: string; link: string; role: string }): Promise<boolean> {
  return false;
}
