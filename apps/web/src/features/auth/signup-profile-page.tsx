import Typography from "@mui/material/Typography";
import { useQuery } from "@tanstack/react-query";
import { useRouter } from "@tanstack/react-router";
import { useTranslation } from "react-i18next";
import { useSdk } from "../../app-services.tsx";
import { FocusCard } from "../../components/auth-frame.tsx";
import { takeAfterSignup } from "./navigation.ts";
import { ProfileForm } from "./profile-form.tsx";
import { sessionQuery } from "./session.ts";

/** Profile completion after registration or email verification (spec 1 §2.1, §2.3). */
export function SignupProfilePage() {
  const { t } = useTranslation();
  const sdk = useSdk();
  const router = useRouter();
  const session = useQuery(sessionQuery(sdk));
  const user = session.data?.kind === "signed-in" ? session.data.user : undefined;
  return (
    <FocusCard pageTitle={t("profile.page_title")} title={t("profile.title")}>
      <Typography color="text.secondary" sx={{ mb: 3 }}>
        {t("profile.text")}
      </Typography>
      {user ? (
        <ProfileForm
          user={user}
          large
          submitLabel={t("profile.submit")}
          onSaved={() => router.history.push(takeAfterSignup() ?? "/")}
        />
      ) : null}
    </FocusCard>
  );
}
