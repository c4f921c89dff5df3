import AttachFile from "@mui/icons-material/AttachFile";
import Alert from "@mui/material/Alert";
import Box from "@mui/material/Box";
import Button from "@mui/material/Button";
import Chip from "@mui/material/Chip";
import CircularProgress from "@mui/material/CircularProgress";
import Link from "@mui/material/Link";
import Table from "@mui/material/Table";
import TableBody from "@mui/material/TableBody";
import TableCell from "@mui/material/TableCell";
import TableRow from "@mui/material/TableRow";
import TextField from "@mui/material/TextField";
import Typography from "@mui/material/Typography";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { type FormEvent, type ReactNode, useEffect, useState } from "react";
import { useTranslation } from "react-i18next";
import { formatDate } from "../../lib/format.ts";
import { saveBlob } from "../../lib/save-blob.ts";
import { showToast } from "../../lib/toasts.ts";
import { type AttachmentLink, type FilledField, supportKeys, type TicketThread } from "./api.ts";
import { useSupportApi } from "./hooks.ts";
import { fileSize, supportErrorText } from "./model.ts";
import { TicketStatusChip } from "./private-support.tsx";

/** An attachment as a download: the link needs the bearer token, so the file is fetched, then saved. */
function AttachmentLinks({ attachments }: { attachments: AttachmentLink[] }) {
  const { t } = useTranslation();
  const api = useSupportApi();
  if (attachments.length === 0) return null;
  const download = async (attachment: AttachmentLink) => {
    try {
      saveBlob(await api.attachment(attachment.href), attachment.file_name);
    } catch {
      showToast("error", t("support.thread.download_failed"));
    }
  };
  return (
    <Box component="ul" aria-label={t("support.thread.attachments")} sx={{ listStyle: "none", p: 0, m: 0, mt: 1 }}>
      {attachments.map((attachment) => (
        <Box component="li" key={attachment.id} sx={{ display: "flex", alignItems: "center", gap: 0.5, fontSize: 13 }}>
          <AttachFile aria-hidden sx={{ fontSize: 14, color: "text.secondary" }} />
          <Link
            component="button"
            type="button"
            underline="hover"
            title={t("support.thread.download", { name: attachment.file_name })}
            onClick={() => void download(attachment)}
            sx={{ fontSize: 13, textAlign: "left", overflowWrap: "anywhere" }}
          >
            {attachment.file_name}
          </Link>
          <Box component="span" sx={{ color: "text.secondary", whiteSpace: "nowrap" }}>
            {fileSize(attachment.size)}
          </Box>
        </Box>
      ))}
    </Box>
  );
}

function Message({
  author,
  staff,
  date,
  body,
  attachments,
}: {
  author: string;
  staff: boolean;
  date: string;
  /** The message's text, or what stands for it (the filled-in form of the opening message). */
  body: ReactNode;
  attachments: AttachmentLink[];
}) {
  const { t } = useTranslation();
  return (
    <Box
      component="article"
      aria-label={`${author}${staff ? ` (${t("support.thread.staff")})` : ""}`}
      sx={{
        border: 1,
        borderColor: staff ? "primary.light" : "divider",
        bgcolor: staff ? "rgba(25, 118, 210, 0.04)" : "background.paper",
        borderRadius: 1,
        p: 1.25,
        mb: 1.25,
      }}
    >
      <Box sx={{ display: "flex", alignItems: "center", gap: 0.75, mb: 0.5, flexWrap: "wrap" }}>
        <Typography component="span" sx={{ fontWeight: 600, fontSize: 13 }}>
          {author}
        </Typography>
        {staff ? (
          <Chip size="small" color="primary" label={t("support.thread.staff")} sx={{ height: 18, fontSize: 11 }} />
        ) : null}
        <Typography component="span" sx={{ fontSize: 12, color: "text.secondary", ml: "auto" }}>
          {formatDate(date)}
        </Typography>
      </Box>
      {typeof body === "string" ? (
        <Typography sx={{ fontSize: 14, whiteSpace: "pre-wrap", overflowWrap: "anywhere" }}>{body}</Typography>
      ) : (
        body
      )}
      <AttachmentLinks attachments={attachments} />
    </Box>
  );
}

/**
 * The ticket form as the requester filled it (staff view): every field in the form's order, the
 * required ones marked, a field left blank said to be so.
 */
function FilledFormFields({ form }: { form: FilledField[] }) {
  const { t } = useTranslation();
  return (
    <Table
      size="small"
      aria-label={t("support.thread.form")}
      sx={{
        tableLayout: "fixed",
        "& th, & td": { border: 0, px: 0, py: 0.5, verticalAlign: "top", fontSize: 14, lineHeight: 1.5 },
      }}
    >
      <TableBody>
        {form.map((field) => (
          <TableRow key={field.id}>
            <TableCell
              component="th"
              scope="row"
              sx={{
                width: { xs: 130, sm: 190 },
                pr: 2,
                color: "text.secondary",
                fontWeight: 500,
                overflowWrap: "anywhere",
              }}
            >
              {field.title}
              {field.required ? (
                <Box component="span" sx={{ display: "block", fontSize: 11, fontWeight: 400, color: "text.disabled" }}>
                  {t("support.thread.required")}
                </Box>
              ) : null}
            </TableCell>
            <TableCell sx={{ whiteSpace: "pre-wrap", overflowWrap: "anywhere" }}>
              {field.display ?? (
                <Box component="span" sx={{ color: "text.disabled", fontStyle: "italic" }}>
                  {t("support.thread.not_filled")}
                </Box>
              )}
            </TableCell>
          </TableRow>
        ))}
      </TableBody>
    </Table>
  );
}

/**
 * A ticket's thread (spec 3 §2): the description and the replies, staff replies marked, with
 * attachments. In the staff view the opening message is the whole form as the requester filled it.
 */
export function ThreadMessages({ ticket, header }: { ticket: TicketThread; header?: ReactNode }) {
  const { t } = useTranslation();
  const requester = ticket.requester?.username ?? ticket.requester_email ?? "";
  return (
    <Box>
      <Typography component="h3" sx={{ fontWeight: 600, fontSize: 16, mb: 0.5, overflowWrap: "anywhere" }}>
        {ticket.subject}
      </Typography>
      <Box sx={{ display: "flex", alignItems: "center", gap: 1, flexWrap: "wrap", mb: 1.5 }}>
        <TicketStatusChip status={ticket.status} />
        <Typography component="span" sx={{ fontSize: 12, color: "text.secondary" }}>
          {`${ticket.organization.name} · ${t("support.thread.priority", { priority: t(`support.priority.${ticket.priority}`) })}`}
        </Typography>
      </Box>
      {ticket.email_ccs.length > 0 ? (
        <Typography sx={{ fontSize: 12, color: "text.secondary", mb: 1, overflowWrap: "anywhere" }}>
          {t("support.thread.cc", { addresses: ticket.email_ccs.join(", ") })}
        </Typography>
      ) : null}
      {header}
      <Message
        author={requester}
        staff={false}
        date={ticket.created_at}
        body={ticket.form ? <FilledFormFields form={ticket.form} /> : ticket.description}
        attachments={ticket.attachments}
      />
      {ticket.comments.map((comment) => (
        <Message
          key={comment.id}
          author={comment.author?.username ?? t("support.thread.staff")}
          staff={comment.is_staff}
          date={comment.created_at}
          body={comment.body}
          attachments={comment.attachments ?? []}
        />
      ))}
    </Box>
  );
}

/** The reply box: a text and a send button; `extra` adds the staff's status choice. */
export function ReplyBox({ onSend, extra }: { onSend: (body: string) => Promise<unknown>; extra?: ReactNode }) {
  const { t } = useTranslation();
  const [body, setBody] = useState("");
  const send = useMutation({
    mutationFn: () => onSend(body.trim()),
    meta: { reportErrors: false },
    onSuccess: () => {
      setBody("");
      showToast("success", t("support.thread.reply_sent"));
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (body.trim() !== "") send.mutate();
  };
  return (
    <Box component="form" onSubmit={submit} aria-label={t("support.thread.reply")} sx={{ mt: 1 }}>
      <TextField
        label={t("support.thread.reply")}
        multiline
        minRows={3}
        fullWidth
        size="small"
        value={body}
        onChange={(event) => setBody(event.target.value)}
        sx={{ mb: 1 }}
      />
      {send.isError ? (
        <Alert severity="error" sx={{ mb: 1 }}>
          {supportErrorText(send.error)}
        </Alert>
      ) : null}
      <Box sx={{ display: "flex", gap: 1, alignItems: "center", justifyContent: "flex-end", flexWrap: "wrap" }}>
        {extra}
        <Button type="submit" variant="contained" size="small" loading={send.isPending} disabled={body.trim() === ""}>
          {t("support.thread.send")}
        </Button>
      </Box>
    </Box>
  );
}

/**
 * The requester's ticket: its thread and a reply box (the drawer and /support/tickets/{id}).
 * `onUnreadable`: what to do instead of saying it could not be loaded (staff go to the inbox).
 */
export function RequesterTicket({ id, onUnreadable }: { id: number; onUnreadable?: () => void }) {
  const { t } = useTranslation();
  const api = useSupportApi();
  const queryClient = useQueryClient();
  const ticket = useQuery({
    queryKey: supportKeys.ticket(id),
    queryFn: () => api.ticket(id),
    retry: false,
    meta: { handlesErrors: true },
  });
  const unreadable = ticket.isError && onUnreadable !== undefined;
  useEffect(() => {
    if (unreadable) onUnreadable?.();
  }, [unreadable, onUnreadable]);
  if (unreadable) return <CircularProgress size={24} aria-label={t("app.loading")} />;
  if (ticket.isError) return <Alert severity="error">{t("support.thread.load_failed")}</Alert>;
  if (!ticket.data) return <CircularProgress size={24} aria-label={t("app.loading")} />;
  return (
    <>
      <ThreadMessages ticket={ticket.data} />
      <ReplyBox
        onSend={async (body) => {
          await api.reply(id, body);
          await Promise.all([
            queryClient.invalidateQueries({ queryKey: supportKeys.ticket(id) }),
            queryClient.invalidateQueries({ queryKey: supportKeys.tickets, exact: true }),
          ]);
        }}
      />
    </>
  );
}

export const DrawerTicket = RequesterTicket;
