// The seller's web checkout technical configuration: defaults until the first update, a recursive
// merge of each partial update, rules on the merged result, and a view that never shows the password.
import type { components } from '../http/contract.ts';
import type { Problem } from '../http/errors.ts';
import type { Store } from '../store/store.ts';
import { configurationNotFound, fieldProblem, validationError } from './errors.ts';
import { sellerLookupsOf } from '../http/fair-lookups.ts';
import type { HostResolver } from '../http/public-addresses.ts';
import { httpUrlOf, NOT_AN_HTTP_URL } from './http-url.ts';
import { notificationUrlRefusal } from './notification-url.ts';
import { webCheckoutRepository, type StoredTechnicalConfiguration, type WebCheckoutRepository } from './repository.ts';
import { sellerOfToken } from './service.ts';

type Schemas = components['schemas'];
export type TechnicalConfiguration = Schemas['TechnicalConfiguration'];
export type TechnicalConfigurationUpdate = Schemas['TechnicalConfigurationUpdate'];

/** Contract decision: every checkout seller starts with these, and no URLs or notification. */
export const DEFAULT_TECHNICAL_CONFIGURATION: StoredTechnicalConfiguration = {
  primaryColor: '#0B3B8C',
  accentColor: '#F5A623',
  typeFace: 'Platform Micro Text',
  successUrl: null,
  errorUrl: null,
  notificationUrl: null,
  notificationAuthenticationType: null,
  notificationUser: null,
  notificationPassword: null,
};

/** Contract decision: the only authentication type, and the default once a notification is set. */
const DEFAULT_AUTHENTICATION_TYPE = 'user_credentials';

/**
 * The update merged into the stored configuration: an absent property keeps its value, a present
 * one replaces it, nested objects merge property by property. Only the contract's properties are
 * read, so an unknown one is neither stored nor returned. (`null` and `{}` never get here: the
 * schema refuses them, 422 and 400.)
 */
export function mergeTechnicalConfiguration(stored: StoredTechnicalConfiguration, update: TechnicalConfigurationUpdate): StoredTechnicalConfiguration {
  const layout = update.layout_customization;
  const notification = update.notification;
  const merged: StoredTechnicalConfiguration = {
    primaryColor: layout?.color?.primary ?? stored.primaryColor,
    accentColor: layout?.color?.accent ?? stored.accentColor,
    typeFace: layout?.type_face ?? stored.typeFace,
    successUrl: update.success_url ?? stored.successUrl,
    errorUrl: update.error_url ?? stored.errorUrl,
    notificationUrl: notification?.url ?? stored.notificationUrl,
    notificationAuthenticationType: notification?.authentication_type ?? stored.notificationAuthenticationType,
    notificationUser: notification?.user_credentials?.user ?? stored.notificationUser,
    notificationPassword: notification?.user_credentials?.password ?? stored.notificationPassword,
  };
  if (notification && merged.notificationAuthenticationType === null) merged.notificationAuthenticationType = DEFAULT_AUTHENTICATION_TYPE;
  return merged;
}

/** A stored notification is complete (url, user, password) or absent altogether. */
export function incompleteNotificationViolations(c: StoredTechnicalConfiguration): Problem[] {
  const parts = [c.notificationUrl, c.notificationAuthenticationType, c.notificationUser, c.notificationPassword];
  if (parts.every((part) => part === null)) return [];
  const when = c.notificationUrl === null ? 'is required when notification is set' : 'is required when notification.url is set';
  const required: Array<[string, string | null]> = [
    ['notification.url', c.notificationUrl],
    ['notification.user_credentials.user', c.notificationUser],
    ['notification.user_credentials.password', c.notificationPassword],
  ];
  return required.filter(([, value]) => value === null).map(([field]) => fieldProblem(field, when));
}

/**
 * Package decision (the password is write-only): an update that moves the notification to another
 * URL sends the password again. Otherwise whoever holds a seller token for an hour could point the
 * webhook at an address of theirs and receive the stored password in the next notification's Basic
 * header, then forge notifications to the merchant's real receiver for as long as it stays valid.
 */
export function movedNotificationViolations(stored: StoredTechnicalConfiguration, update: TechnicalConfigurationUpdate): Problem[] {
  const notification = update.notification;
  const moved = notification?.url !== undefined && stored.notificationUrl !== null && notification.url !== stored.notificationUrl;
  if (!moved || stored.notificationPassword === null || notification.user_credentials?.password !== undefined) return [];
  return [fieldProblem('notification.user_credentials.password', 'is required when notification.url changes: the stored password is never sent to a new address')];
}

/** A notification URL sent in the update must be one this server may call (see notification-url.ts). */
export async function notificationUrlViolations(
  update: TechnicalConfigurationUpdate,
  options: { allowPrivateAddresses: boolean; resolve: HostResolver },
): Promise<Problem[]> {
  const url = update.notification?.url;
  const problem = url === undefined ? undefined : await notificationUrlRefusal(url, options);
  return problem ? [fieldProblem('notification.url', problem)] : [];
}

/** The redirect URLs sent in the update must be ones the customer's browser can follow (see http-url.ts). */
export function redirectUrlViolations(update: TechnicalConfigurationUpdate): Problem[] {
  return (['success_url', 'error_url'] as const)
    .filter((field) => {
      const url = update[field];
      return url !== undefined && !httpUrlOf(url);
    })
    .map((field) => fieldProblem(field, NOT_AN_HTTP_URL));
}

/** The configuration as the API shows it: complete layout, URLs once set, never the password. */
export function technicalConfigurationView(c: StoredTechnicalConfiguration): TechnicalConfiguration {
  const view: TechnicalConfiguration = {
    layout_customization: { color: { primary: c.primaryColor, accent: c.accentColor }, type_face: c.typeFace as TechnicalConfiguration['layout_customization']['type_face'] },
  };
  if (c.successUrl !== null) view.success_url = c.successUrl;
  if (c.errorUrl !== null) view.error_url = c.errorUrl;
  if (c.notificationUrl !== null && c.notificationUser !== null) {
    view.notification = {
      url: c.notificationUrl,
      authentication_type: (c.notificationAuthenticationType ?? DEFAULT_AUTHENTICATION_TYPE) as 'user_credentials',
      user_credentials: { user: c.notificationUser },
    };
  }
  return view;
}

export interface TechnicalConfigurationOptions {
  allowPrivateNotificationUrls: boolean;
  /** How notification URL host names are resolved (the system's resolver unless a test injects one). */
  resolveHostName?: HostResolver;
}

export function technicalConfigurationService(store: Store, options: TechnicalConfigurationOptions) {
  // Each seller's host names in its own turn, fairly with the others' (http/fair-lookups.ts).
  const lookups = sellerLookupsOf(options.resolveHostName, options.allowPrivateNotificationUrls);
  /** A seller whose checkout service is off has no configuration (contract: 404, not 403). */
  async function checkoutSellerOf(repository: WebCheckoutRepository, sellerId: string) {
    const seller = await sellerOfToken(repository, sellerId);
    if (seller.services.checkout !== true) throw configurationNotFound();
    return seller;
  }

  return {
    /**
     * Merges, checks and stores in one transaction; a refused update changes nothing. The URLs are
     * checked first, outside the transaction: resolving a host name may take a while.
     */
    async updateTechnicalConfiguration(sellerId: string, update: TechnicalConfigurationUpdate): Promise<TechnicalConfiguration> {
      const urlProblems = [
        ...redirectUrlViolations(update),
        ...(await notificationUrlViolations(update, { allowPrivateAddresses: options.allowPrivateNotificationUrls, resolve: lookups(sellerId) })),
      ];
      return store.transaction(async (tx) => {
        const repository = webCheckoutRepository(tx);
        await checkoutSellerOf(repository, sellerId);
        const stored = await repository.lockTechnicalConfiguration(sellerId, DEFAULT_TECHNICAL_CONFIGURATION);
        const merged = mergeTechnicalConfiguration(stored, update);
        const problems = [...urlProblems, ...movedNotificationViolations(stored, update), ...incompleteNotificationViolations(merged)];
        if (problems.length) throw validationError(problems);
        await repository.updateTechnicalConfiguration(sellerId, merged);
        return technicalConfigurationView(merged);
      });
    },
  };
}
