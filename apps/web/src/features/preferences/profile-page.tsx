import { useTranslation } from "react-i18next";
import { showToast } from "../../lib/toasts.ts";
import { ProfileForm } from "../auth/profile-form.tsx";
import { Section } from "./section.tsx";
import { useSessionUser } from "./use-user.ts";

/** `/preferences/profile` (spec 1 §2.4). */
export function ProfilePreferencesPage() {
  const { t } = useTranslation();
  const user = useSessionUser();
  if (!user) return null;
  return (
    <Section title={t("preferences.tabs.profile")}>
      <ProfileForm
        user={user}
        submitLabel={t("profile.save")}
        onSaved={() => showToast("success", t("profile.saved"))}
      />
    </Section>
  );
}
